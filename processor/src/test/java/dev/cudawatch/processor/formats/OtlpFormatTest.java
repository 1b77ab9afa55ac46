package dev.cudawatch.processor.formats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.WireFormatException;
import dev.cudawatch.processor.formats.ShipperShapes.Line;
import dev.cudawatch.processor.records.RawRecord;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** OTLP log batches from the Collector's Kafka exporter, as otlp_json and otlp_proto. */
class OtlpFormatTest {
  private final OtlpFormat format = new OtlpFormat(new Attribution(null, null));

  /** The shape of the OTLP specification's logs example, with filelog and k8sattributes. */
  private static final String JSON =
      """
      {"resourceLogs":[{"resource":{"attributes":[
         {"key":"host.name","value":{"stringValue":"gpu-node-7"}},
         {"key":"k8s.namespace.name","value":{"stringValue":"ml"}},
         {"key":"k8s.pod.name","value":{"stringValue":"train-1-abc"}},
         {"key":"k8s.container.name","value":{"stringValue":"trainer"}},
         {"key":"k8s.job.name","value":{"stringValue":"train"}},
         {"key":"k8s.pod.labels.batch.kubernetes.io/job-completion-index","value":{"stringValue":"1"}}]},
       "scopeLogs":[{"scope":{"name":"filelog"},"logRecords":[
         {"timeUnixNano":"1763780400250000000","observedTimeUnixNano":"1763780400260000000",
          "severityNumber":9,"severityText":"Info","traceId":"","spanId":"",
          "body":{"stringValue":"Traceback (most recent call last):"},
          "attributes":[{"key":"log.file.path","value":{"stringValue":"/var/log/pods/ml_train-1/trainer/0.log"}},
                        {"key":"log.iostream","value":{"stringValue":"stderr"}}]},
         {"observedTimeUnixNano":"1763780400270000000",
          "body":{"stringValue":"RuntimeError: CUDA error: an illegal memory access was encountered"},
          "attributes":[{"key":"log.file.path","value":{"stringValue":"/var/log/pods/ml_train-1/trainer/0.log"}},
                        {"key":"log.iostream","value":{"stringValue":"stderr"}}]}]}]}]}
      """;

  @Test
  void aJsonBatchBecomesOneRecordPerLogRecordInOrder() throws Exception {
    List<LogRecord> rs = format.parse(Raw.of(40, JSON));
    assertEquals(2, rs.size());
    LogRecord a = rs.get(0);
    LogRecord b = rs.get(1);
    assertEquals("gpu-node-7", a.host());
    assertEquals("train", a.job());
    assertEquals(1, a.rank());
    assertEquals("/var/log/pods/ml_train-1/trainer/0.log", a.source());
    assertEquals("stderr", a.stream());
    assertEquals(Instant.parse("2025-11-22T03:00:00.250Z"), a.eventTime());
    assertEquals(Instant.parse("2025-11-22T03:00:00.270Z"), b.eventTime(), "observed time");
    assertEquals(40L << 20, a.offset());
    assertEquals((40L << 20) + 1, b.offset(), "records of a batch keep their order");
    assertEquals(a.streamKey(), b.streamKey());
  }

  @Test
  void protoAndJsonOfOneBatchReadTheSame() throws Exception {
    List<Line> lines =
        List.of(
            new Line(null, "trainer", 0, Instant.parse("2025-11-22T03:00:00Z"), "a"),
            new Line(null, "trainer", 2, Instant.parse("2025-11-22T03:00:01Z"), "b"));
    List<LogRecord> fromProto =
        format.parse(new RawRecord("t", 1, 40, ShipperShapes.otlpProto(lines)));
    List<LogRecord> fromJson =
        format.parse(new RawRecord("t", 1, 40, ShipperShapes.otlpJson(lines)));
    assertEquals(fromJson, fromProto);
    assertEquals("job-42", fromProto.get(0).job());
  }

  @Test
  void aBatchWithOneUnreadableRecordIsRejectedWhole() {
    String bad =
        JSON.replace(
            "{\"stringValue\":\"Traceback (most recent call last):\"}", "{\"kvlistValue\":{}}");
    WireFormatException e =
        assertThrows(WireFormatException.class, () -> format.parse(Raw.of(1, bad)));
    assertTrue(e.getMessage().contains("body is not a stringValue"), e.getMessage());
  }

  @Test
  void neitherEncodingIsRejected() {
    WireFormatException e =
        assertThrows(
            WireFormatException.class,
            () -> format.parse(new RawRecord("t", 0, 1, new byte[] {(byte) 0xff, 0x01, 0x02})));
    assertTrue(e.getMessage().startsWith("neither otlp_json nor otlp_proto"), e.getMessage());
    e = assertThrows(WireFormatException.class, () -> format.parse(Raw.of(1, "{\"log\":\"x\"}")));
    assertEquals("otlp_json record without \"resourceLogs\"", e.getMessage());
  }
}
