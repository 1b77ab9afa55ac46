package dev.cudawatch.processor.formats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.WireFormatException;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** Record shapes of Filebeat's Kafka output: filestream and container inputs. */
class FilebeatFormatTest {
  private final FilebeatFormat format = new FilebeatFormat(new Attribution(null, null));

  @Test
  void theLineOffsetIsTheDedupKeyAndTheInodeTheFileInstance() throws Exception {
    LogRecord r =
        format
            .parse(
                Raw.of(
                    5,
                    """
                    {"@timestamp":"2025-11-22T03:00:00.250Z",
                     "@metadata":{"beat":"filebeat","type":"_doc","version":"8.15.0"},
                     "log":{"offset":52311,"file":{"path":"/scratch/slurm-4242_7.out","device_id":"2049","inode":"1310723"}},
                     "message":"torch.OutOfMemoryError: CUDA out of memory.","input":{"type":"filestream"},
                     "host":{"name":"gpu-node-7"},"agent":{"type":"filebeat","version":"8.15.0"},"ecs":{"version":"8.0.0"}}
                    """))
            .get(0);
    assertEquals("gpu-node-7", r.host());
    assertEquals("4242_7", r.job(), "a Slurm array task's output file");
    assertEquals(52311, r.offset());
    assertEquals("file:2049:1310723", r.sourceId());
    assertEquals("/scratch/slurm-4242_7.out", r.source());
    assertEquals(Instant.parse("2025-11-22T03:00:00.250Z"), r.eventTime());
  }

  @Test
  void containerLinesCarryDedottedPodLabels() throws Exception {
    LogRecord r =
        format
            .parse(
                Raw.of(
                    5,
                    """
                    {"@timestamp":"2025-11-22T03:00:00.250Z","message":"x","stream":"stderr",
                     "log":{"offset":10,"file":{"path":"/var/log/containers/train-2_ml_trainer-abc.log"}},
                     "kubernetes":{"pod":{"name":"train-2"},"namespace":"ml","node":{"name":"gpu-node-9"},
                      "container":{"name":"trainer"},
                      "labels":{"batch_kubernetes_io/job-name":"train","batch_kubernetes_io/job-completion-index":"2"}}}
                    """))
            .get(0);
    assertEquals("gpu-node-9", r.host(), "no host block: the node");
    assertEquals("train", r.job());
    assertEquals(2, r.rank());
    assertEquals("stderr", r.stream());
  }

  @Test
  void aBadOffsetFailsTheRecord() {
    WireFormatException e =
        assertThrows(
            WireFormatException.class,
            () ->
                format.parse(
                    Raw.of(
                        1,
                        """
                        {"@timestamp":"2025-11-22T03:00:00Z","message":"x","host":{"name":"h"},
                         "log":{"offset":-4,"file":{"path":"/f"}}}
                        """)));
    assertTrue(e.getMessage().contains("log.offset is not an offset"), e.getMessage());
  }
}
