package dev.cudawatch.processor.formats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.common.wire.WireFormatException;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** Record shapes of Fluent Bit's Kafka output (format json, timestamp_key @timestamp). */
class FluentBitFormatTest {
  private final FluentBitFormat format = new FluentBitFormat(new Attribution(null, null));

  @Test
  void aKubernetesContainerLineCarriesPodJobAndRank() throws Exception {
    LogRecord r =
        format
            .parse(
                Raw.of(
                    7,
                    """
                    {"@timestamp":1763780400.25,"log":"RuntimeError: CUDA error: out of memory\\n",
                     "stream":"stderr","time":"2025-11-22T03:00:00.250000000Z",
                     "kubernetes":{"pod_name":"train-3-x7k2p","namespace_name":"ml",
                      "pod_id":"0b7c6d6e","labels":{"job-name":"train","batch.kubernetes.io/job-completion-index":"3"},
                      "host":"gpu-node-7","container_name":"trainer","docker_id":"d0c4e7",
                      "container_image":"nvcr.io/nvidia/pytorch:25.10-py3"}}
                    """))
            .get(0);
    assertEquals("gpu-node-7", r.host());
    assertEquals("train", r.job());
    assertEquals(3, r.rank());
    assertEquals("ml/train-3-x7k2p/trainer", r.source());
    assertEquals("stderr", r.stream());
    assertEquals("RuntimeError: CUDA error: out of memory", r.text(), "the newline dropped");
    assertEquals(Instant.parse("2025-11-22T03:00:00.250Z"), r.eventTime());
    assertEquals(7L << 20, r.offset(), "no Offset_Key: the Kafka offset");
    assertTrue(r.sourceId().endsWith("kafka-1"), r.sourceId());
  }

  @Test
  void aTailedFileKeepsItsPathAndOffset() throws Exception {
    LogRecord r =
        format
            .parse(
                Raw.of(
                    7,
                    """
                    {"@timestamp":"2025-11-22T03:00:00.250Z","log":"step 1","filename":"/scratch/slurm-4242.out",
                     "offset":1024,"hostname":"gpu-node-7"}
                    """))
            .get(0);
    assertEquals("/scratch/slurm-4242.out", r.source());
    assertEquals("4242", r.job(), "a Slurm output file names its job");
    assertNull(r.rank());
    assertEquals(1024, r.offset());
    assertEquals(RecordKind.LOG, r.kind());
  }

  @Test
  void theKmsgInputIsTheKernelLog() throws Exception {
    LogRecord r =
        format
            .parse(
                Raw.of(
                    7,
                    """
                    {"@timestamp":1763780400.0,"priority":3,"sequence":1711,"sec":146,"usec":564814,
                     "msg":"NVRM: Xid (PCI:0000:00:06): 13, pid=674, name=python3","hostname":"gpu-node-7"}
                    """))
            .get(0);
    assertEquals(RecordKind.KERNEL, r.kind());
    assertEquals(1711, r.offset());
    assertEquals("/dev/kmsg", r.source());
  }

  @Test
  void otherShapesAreRejectedWithTheirReason() {
    WireFormatException e =
        assertThrows(
            WireFormatException.class,
            () -> format.parse(Raw.of(1, "{\"message\":\"x\",\"host\":\"h\"}")));
    assertTrue(e.getMessage().contains("neither \"log\""), e.getMessage());
    e =
        assertThrows(
            WireFormatException.class,
            () -> format.parse(Raw.of(1, "{\"log\":\"x\",\"@timestamp\":1.0}")));
    assertEquals("fluent-bit record without host", e.getMessage());
  }
}
