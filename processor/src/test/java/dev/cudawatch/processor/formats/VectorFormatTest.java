package dev.cudawatch.processor.formats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.common.wire.WireFormatException;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** Record shapes of Vector's Kafka sink (encoding.codec json) from file and kubernetes_logs. */
class VectorFormatTest {
  private final VectorFormat format =
      new VectorFormat(new Attribution("/jobs/(?P<job>[^/]+)/rank-(?P<rank>\\d+)\\.log$", null));

  @Test
  void aFileSourceLineTakesJobAndRankFromThePath() throws Exception {
    LogRecord r =
        format
            .parse(
                Raw.of(
                    9,
                    """
                    {"file":"/var/log/jobs/llm-7b/rank-5.log","host":"gpu-node-7",
                     "message":"Traceback (most recent call last):","source_type":"file",
                     "timestamp":"2025-11-22T03:00:00.250123Z"}
                    """))
            .get(0);
    assertEquals("gpu-node-7", r.host());
    assertEquals("llm-7b", r.job());
    assertEquals(5, r.rank());
    assertEquals("/var/log/jobs/llm-7b/rank-5.log", r.source());
    assertEquals(Instant.parse("2025-11-22T03:00:00.250123Z"), r.eventTime());
    assertEquals((9L << 20), r.offset(), "Vector has no offset: the Kafka offset");
  }

  @Test
  void aKubernetesLogsLineUsesPodLabelsAndTheNode() throws Exception {
    LogRecord r =
        format
            .parse(
                Raw.of(
                    9,
                    """
                    {"file":"/var/log/pods/ml_train-0_uid/trainer/0.log","message":"x",
                     "source_type":"kubernetes_logs","stream":"stderr","timestamp":"2025-11-22T03:00:00Z",
                     "kubernetes":{"container_name":"trainer","pod_name":"train-0","pod_namespace":"ml",
                      "pod_labels":{"training.kubeflow.org/job-name":"bert","training.kubeflow.org/replica-index":"0"},
                      "pod_node_name":"gpu-node-8"}}
                    """))
            .get(0);
    assertEquals("gpu-node-8", r.host());
    assertEquals("bert", r.job());
    assertEquals(0, r.rank());
    assertEquals("stderr", r.stream());
  }

  @Test
  void kernLogIsTheKernelLog() throws Exception {
    LogRecord r =
        format
            .parse(
                Raw.of(
                    1,
                    """
                    {"file":"/var/log/kern.log","host":"n","message":"NVRM: Xid","source_type":"file",
                     "timestamp":"2025-11-22T03:00:00Z"}
                    """))
            .get(0);
    assertEquals(RecordKind.KERNEL, r.kind());
  }

  /** A job can name its own file kern.log or dmesg: only the system's kernel files count. */
  @Test
  void aKernelFileNameInAJobsDirectoryIsTheJobsOutput() throws Exception {
    for (String file :
        new String[] {
          "/var/log/jobs/42/kern.log", "/home/alice/dmesg", "/scratch/dmesg-node7.txt", "kern.log"
        }) {
      assertEquals(RecordKind.LOG, kindOf(format, file), file);
    }
    for (String file : new String[] {"/var/log/kern.log.1", "/var/log/dmesg", "/dev/kmsg"}) {
      assertEquals(RecordKind.KERNEL, kindOf(format, file), file);
    }
    VectorFormat configured = new VectorFormat(new Attribution(null, "^/host/var/log/kern\\.log$"));
    assertEquals(RecordKind.KERNEL, kindOf(configured, "/host/var/log/kern.log"));
    assertEquals(RecordKind.LOG, kindOf(configured, "/var/log/kern.log"));
  }

  private static RecordKind kindOf(VectorFormat f, String file) throws Exception {
    String v =
        "{\"file\":\""
            + file
            + "\",\"host\":\"n\",\"message\":\"NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has"
            + " fallen off the bus.\",\"source_type\":\"file\",\"timestamp\":\"2025-11-22T03:00:00Z\"}";
    return f.parse(Raw.of(1, v)).get(0).kind();
  }

  @Test
  void otherShapesAreRejected() {
    WireFormatException e =
        assertThrows(WireFormatException.class, () -> format.parse(Raw.of(1, "{\"log\":\"x\"}")));
    assertTrue(e.getMessage().contains("without \"message\""), e.getMessage());
    e =
        assertThrows(
            WireFormatException.class,
            () ->
                format.parse(
                    Raw.of(
                        1,
                        "{\"message\":\"x\",\"host\":\"h\",\"file\":\"/f\",\"timestamp\":\"yesterday\"}")));
    assertTrue(e.getMessage().contains("not an RFC 3339 time"), e.getMessage());
  }
}
