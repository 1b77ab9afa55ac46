package dev.cudawatch.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.WireFormatException;
import dev.cudawatch.common.wire.WireJson;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class WireJsonTest {
  private static final Instant T = Instant.parse("2026-11-22T03:00:00Z");

  @Test
  void warmUpRoundTripsItsSamplesAndLeavesTheMapperAsItWas() throws Exception {
    WireJson.warmUp();
    WireJson.warmUp(); // once per JVM: the second is a no-op
    LogRecord r =
        LogRecord.builder()
            .host("h")
            .kind(dev.cudawatch.common.wire.RecordKind.LOG)
            .source("/x")
            .eventTime(T)
            .text("after the warm-up")
            .build();
    assertEquals(r, WireJson.readLogRecord(WireJson.toBytes(r)));
  }

  @Test
  void recordsRoundTripWithSnakeCaseNames() throws Exception {
    LogRecord r =
        LogRecord.builder()
            .host("n1")
            .job("j")
            .rank(3)
            .source("/l.log")
            .sourceId("9:1@x")
            .offset(42)
            .eventTime(T)
            .text("hi")
            .build();
    String json = WireJson.toJson(r);
    assertTrue(json.contains("\"source_id\":\"9:1@x\"") && json.contains("\"v\":1"), json);
    assertEquals(r, WireJson.readLogRecord(json.getBytes(StandardCharsets.UTF_8)));
    assertEquals("n1:/l.log#9:1@x@42", r.id());

    Incident i =
        Incident.builder("id", "cuda_oom")
            .count(2)
            .severity("error")
            .suspect("application")
            .signature("s")
            .fields(Map.of("gpu", 0))
            .summary("sum")
            .explanation("why")
            .nextSteps(List.of("do"))
            .host("n1")
            .job("j")
            .source("/l.log")
            .line(7)
            .firstRecordId("rid")
            .eventTime(T)
            .detectedTime(T)
            .excerpt(List.of("line"))
            .build();
    String ij = WireJson.toJson(i);
    assertTrue(ij.contains("\"class\":\"cuda_oom\"") && ij.contains("\"next_steps\":[\"do\"]"), ij);
    assertEquals(i.id(), WireJson.readIncident(ij.getBytes(StandardCharsets.UTF_8)).id());

    Map<String, String> labels = Map.of("alertname", "A", "host", "n1");
    Alert a =
        new Alert(1, Alert.fingerprintOf(labels), Alert.State.FIRING, labels, Map.of(), T, null);
    assertEquals(a, WireJson.readAlert(WireJson.toBytes(a)));
    assertEquals(
        Alert.fingerprintOf(Map.of("host", "n1", "alertname", "A")),
        a.fingerprint(),
        "label order does not matter");
  }

  @Test
  void unreadableRecordsAreRejectedWithAReason() {
    assertEquals("not JSON", reason("{broken").substring(0, 8));
    assertEquals("missing or non-integer version field \"v\"", reason("{\"id\":\"x\"}"));
    assertTrue(reason("{\"v\":2,\"id\":\"x\"}").startsWith("unsupported LogRecord version 2"));
    assertTrue(reason("{\"v\":1,\"id\":\"x\",\"surprise\":1}").startsWith("invalid LogRecord"));
    assertEquals("empty record", reason(""));
  }

  private static String reason(String json) {
    return assertThrows(
            WireFormatException.class,
            () -> WireJson.readLogRecord(json.getBytes(StandardCharsets.UTF_8)))
        .getMessage();
  }
}
