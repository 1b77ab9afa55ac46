package dev.cudawatch.processor.formats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.text.TrainingOutput;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.common.wire.WireFormatException;
import dev.cudawatch.common.wire.WireJson;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The one-pass read gives what the version-checking tree read gives, record or reason. */
class CudawatchFormatTest {
  private final CudawatchFormat format = new CudawatchFormat();

  @Test
  void theAgentsRecordsReadAsTheTreeReadsThem() throws Exception {
    Instant t = Instant.parse("2026-11-22T03:00:00.123Z");
    LogRecord r =
        LogRecord.builder().host("node-1").job("job-7").rank(3).kind(RecordKind.LOG).stream(
                "stderr")
            .source("/logs/rank-3.log")
            .offset(123_456_789_012L)
            .eventTime(t)
            .ingestTime(t.plusMillis(5))
            .attribution(Map.of("tried", "cgroup"))
            .text("héllo \"quoted\" \t " + TrainingOutput.line(7))
            .build();
    byte[] bytes = WireJson.toBytes(r);
    assertTrue(
        new String(bytes, StandardCharsets.UTF_8).startsWith("{\"v\":1,"),
        "the agent writes the version first, so its records take the fast path");
    assertEquals(List.of(WireJson.readLogRecord(bytes)), format.parse(Raw.of(0, json(bytes))));
    assertEquals(r, CudawatchFormat.read(bytes));
  }

  @Test
  void whatTheFastPathCannotTakeFailsWithTheTreeReadsReason() {
    for (String bad :
        List.of(
            "{\"v\":2,\"host\":\"h\"}",
            "{\"host\":\"h\",\"v\":1}x",
            "{\"v\":1,\"host\":\"h\",\"v\":2}",
            "{\"v\":1,\"host\":\"h\",\"v\":1.5}",
            "{\"v\":1,\"host\":\"h\",\"unknown\":true}",
            "{\"v\":1,\"host\":",
            "{\"v\":1,\"offset\":\"x\"}",
            "{\"v\":1.0,\"host\":\"h\"}",
            "{\"v\":1,}",
            "{\"v\":1,\"host\":\"h\",\"event_time\":\"2026-02-30T00:00:00Z\"}",
            "{\"v\":1,\"host\":\"h\",\"event_time\":\"2016-12-31T23:59:60Z\"}",
            "{\"v\":1,\"host\":\"h\",\"event_time\":\"2026-11-22T03:00:00+01:00\"}",
            "{\"v\":1,\"host\":\"h\",\"event_time\":1700000000.5}",
            "{\"v\":1,\"host\":\"h\",\"event_time\":\"yesterday\"}",
            "[1]",
            "")) {
      byte[] b = bad.getBytes(StandardCharsets.UTF_8);
      String expected = reason(() -> WireJson.readLogRecord(b));
      String actual = reason(() -> CudawatchFormat.read(b));
      assertEquals(expected, actual, bad);
    }
  }

  private interface Read {
    LogRecord run() throws WireFormatException;
  }

  /** The reason a read fails with, or "read" when it does not fail. */
  private static String reason(Read read) {
    try {
      read.run();
      return "read";
    } catch (WireFormatException e) {
      return e.getMessage();
    }
  }

  private static String json(byte[] b) {
    return new String(b, StandardCharsets.UTF_8);
  }

  @Test
  void anEmptyRecordIsRefused() {
    assertThrows(WireFormatException.class, () -> CudawatchFormat.read(new byte[0]));
  }
}
