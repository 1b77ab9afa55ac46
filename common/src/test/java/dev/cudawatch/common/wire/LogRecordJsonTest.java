package dev.cudawatch.common.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The streaming encoder writes the mapper's bytes, so the processor reads what it always read. */
class LogRecordJsonTest {
  private final LogRecordJson encoder = new LogRecordJson();

  @Test
  void writesTheMappersBytesForEveryShapeOfRecord() throws Exception {
    Map<String, String> attribution = new LinkedHashMap<>();
    attribution.put("job", "slurm sidecar");
    attribution.put("gpu", "writing process's open /dev/nvidia3");
    attribution.put("tried", "slurm, kubernetes, writing process (/proc/<pid>/fd)");
    Instant t = Instant.parse("2026-11-26T10:00:00.123456Z");
    LogRecord full =
        LogRecord.builder()
            .host("gpu-node-7")
            .job("4242")
            .rank(3)
            .localRank(1)
            .gpu(3)
            .kind(RecordKind.LOG)
            .stream("stderr")
            .source("/var/log/train \"rank3\".log")
            .sourceId("2049:131#x@lq3.1")
            .offset(9_876_543_210L)
            .eventTime(t)
            .ingestTime(t.plusNanos(1))
            .text("tab\there, quote \" backslash \\ ctl \u0001 nl \n é 漢字 😀 </script>")
            .lineCount(2)
            .raw("\u001b[31mred\u001b[0m")
            .gpuUuid("GPU-0f2c")
            .attribution(attribution)
            .build();
    LogRecord bare =
        LogRecord.builder().host("h").source("s").text("").eventTime(Instant.EPOCH).build();
    List<LogRecord> records =
        List.of(
            full,
            bare,
            full.quietAt(10_000_000_000L, t),
            full.withGpu(5, "MIG-1", "kernel line's PCI address"),
            full.withEventTime(Instant.parse("0000-01-01T00:00:00Z")),
            full.withEventTime(Instant.parse("9999-12-31T23:59:59.999999999Z")),
            full.withEventTime(Instant.parse("+10000-01-01T00:00:00.5Z")),
            full.withEventTime(Instant.parse("-0001-06-01T12:00:00.000001Z")),
            LogRecord.builder().host("h").kind(RecordKind.KERNEL).stream("kmsg")
                .source("/dev/kmsg")
                .text("NVRM: Xid (PCI:0000:3b:00): 79")
                .eventTime(t)
                .build());
    for (int round = 0; round < 2; round++) { // the kept generator writes no separator between
      for (LogRecord r : records) {
        assertArrayEquals(
            WireJson.mapper().writeValueAsBytes(r),
            encoder.encode(r),
            () -> new String(encoder.encode(r), StandardCharsets.UTF_8));
        assertEquals(r, WireJson.readLogRecord(encoder.encode(r)));
      }
    }
    assertArrayEquals(WireJson.mapper().writeValueAsBytes(full), WireJson.toBytes(full));
  }

  @Test
  void aRecordLargerThanTheKeptBufferIsWrittenWhole() throws Exception {
    LogRecord big =
        LogRecord.builder()
            .host("h")
            .source("s")
            .text("x".repeat(200_000))
            .eventTime(Instant.EPOCH)
            .build();
    assertArrayEquals(WireJson.mapper().writeValueAsBytes(big), encoder.encode(big));
    LogRecord small =
        LogRecord.builder().host("h").source("s").text("y").eventTime(Instant.EPOCH).build();
    assertArrayEquals(WireJson.mapper().writeValueAsBytes(small), encoder.encode(small));
  }

  @Test
  void formatsInstantsAsIsoInstantDoes() {
    SplittableRandom random = new SplittableRandom(35);
    char[] out = new char[40];
    long min = Instant.parse("0000-01-01T00:00:00Z").getEpochSecond();
    long max = Instant.parse("9999-12-31T23:59:59Z").getEpochSecond();
    for (int i = 0; i < 200_000; i++) {
      int nano =
          switch (i % 4) {
            case 0 -> 0;
            case 1 -> random.nextInt(1000) * 1_000_000;
            case 2 -> random.nextInt(1_000_000) * 1000;
            default -> random.nextInt(1_000_000_000);
          };
      Instant t = Instant.ofEpochSecond(random.nextLong(min, max + 1), nano);
      int n = IsoInstant.format(t, out);
      assertEquals(DateTimeFormatter.ISO_INSTANT.format(t), new String(out, 0, n));
    }
    assertEquals(-1, IsoInstant.format(Instant.parse("+10000-01-01T00:00:00Z"), out));
  }
}
