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
import java.util.SplittableRandom;
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
            "",
            // the streaming reader's own refusals: each must end as the tree read ends
            "{\"v\":1,\"host\":\"h\",\"rank\":\"3\"}",
            "{\"v\":1,\"host\":\"h\",\"rank\":3.0}",
            "{\"v\":1,\"host\":\"h\",\"rank\":30000000000}",
            "{\"v\":1,\"host\":\"h\",\"offset\":123456789012345678901234567890}",
            "{\"v\":1,\"host\":\"h\",\"kind\":\"log\"}",
            "{\"v\":1,\"host\":\"h\",\"kind\":\"NOPE\"}",
            "{\"v\":1,\"host\":null}",
            "{\"v\":1,\"host\":\"h\",\"host\":\"g\"}",
            "{\"v\":1,\"host\":\"h\",\"attribution\":{\"a\":null}}",
            "{\"v\":1,\"host\":\"h\",\"attribution\":{\"a\":{}}}",
            "{\"v\":1,\"host\":\"h\",\"attribution\":[]}")) {
      byte[] b = bad.getBytes(StandardCharsets.UTF_8);
      String expected = reason(() -> WireJson.readLogRecord(b));
      String actual = reason(() -> CudawatchFormat.read(b));
      assertEquals(expected, actual, bad);
    }
  }

  /**
   * Records the agent writes, with every optional field present or absent, and each mutated into
   * something the fast reader must leave to the general one (a field repeated, retyped, nulled,
   * dropped, followed by junk): the fast path reads what the tree read reads, or fails with its
   * reason.
   */
  @Test
  void theFastReaderAgreesWithTheTreeReadOnManyRecordsAndMutations() {
    SplittableRandom rnd = new SplittableRandom(35);
    int fast = 0;
    for (int i = 0; i < 3000; i++) {
      Instant t =
          Instant.ofEpochSecond(
              1_700_000_000L + rnd.nextInt(100_000_000), rnd.nextInt(4) * 123_000_000);
      LogRecord.Builder b =
          LogRecord.builder()
              .host("node-" + rnd.nextInt(10))
              .kind(RecordKind.values()[rnd.nextInt(RecordKind.values().length)])
              .source("/logs/r" + rnd.nextInt(8) + ".log")
              .offset(rnd.nextLong(Long.MAX_VALUE))
              .eventTime(t)
              .text(rnd.nextBoolean() ? TrainingOutput.line(i) : "ünï \"q\" \\ \t" + i)
              .lineCount(1 + rnd.nextInt(3));
      if (rnd.nextBoolean()) b.job("job-" + i);
      if (rnd.nextBoolean()) b.rank(rnd.nextInt(1024));
      if (rnd.nextBoolean()) b.localRank(rnd.nextInt(8));
      if (rnd.nextBoolean()) b.gpu(rnd.nextInt(8));
      if (rnd.nextBoolean()) b.stream("stderr");
      if (rnd.nextBoolean()) b.sourceId("2049:" + i);
      if (rnd.nextBoolean()) b.ingestTime(t.plusNanos(rnd.nextInt(1_000_000_000)));
      if (rnd.nextBoolean()) b.raw("\u001b[1m" + i);
      if (rnd.nextBoolean()) b.gpuUuid("GPU-" + i);
      if (rnd.nextBoolean())
        b.attribution(Map.of("tried", "cgroup,env", "gpu", "CUDA_VISIBLE_DEVICES"));
      String json = json(WireJson.toBytes(b.build()));
      assertSame(json);
      if (LogRecordReader.read(json.getBytes(StandardCharsets.UTF_8)) != null) {
        fast++; // the agent's own records take the fast path
      }
      assertSame(mutate(json, rnd));
    }
    assertEquals(3000, fast);
  }

  /** One small change to a valid record's JSON. */
  private static String mutate(String json, SplittableRandom rnd) {
    return switch (rnd.nextInt(10)) {
      case 0 -> json + " x";
      case 1 -> json.replace("\"host\":", "\"host\":\"dup\",\"host\":");
      case 2 -> json.replaceFirst("\"offset\":[0-9]+,", "");
      case 3 -> json.replaceFirst("\"line_count\":[0-9]+", "\"line_count\":null");
      case 4 -> json.replaceFirst("\"offset\":([0-9]+)", "\"offset\":\"$1\"");
      case 5 -> json.replace("Z\"", "+00:00\"");
      case 6 -> json.replace("\"text\":", "\"txt\":");
      case 7 -> json.substring(0, json.length() - 1 - rnd.nextInt(json.length() / 2));
      case 8 -> json.replace("\"kind\":\"", "\"kind\":\"X");
      default -> json.replaceFirst("\"id\":\"[^\"]*\",", "");
    };
  }

  private static void assertSame(String json) {
    byte[] b = json.getBytes(StandardCharsets.UTF_8);
    LogRecord expected;
    try {
      expected = WireJson.readLogRecord(b);
    } catch (WireFormatException e) {
      assertEquals(e.getMessage(), reason(() -> CudawatchFormat.read(b)), json);
      return;
    }
    try {
      assertEquals(expected, CudawatchFormat.read(b), json);
    } catch (WireFormatException e) {
      throw new AssertionError("the fast path refused what the tree read reads: " + json, e);
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
