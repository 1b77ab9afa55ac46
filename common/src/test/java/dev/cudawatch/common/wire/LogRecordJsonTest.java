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
import java.util.function.Supplier;
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
  void keptFieldsAreWrittenAgainWhenAnyOfThemChanges() throws Exception {
    Map<String, String> attribution = new LinkedHashMap<>();
    attribution.put("job", "slurm sidecar");
    attribution.put("rank", "RANK");
    attribution.put("tried", "slurm, kubernetes");
    Map<String, String> reversed = new LinkedHashMap<>();
    reversed.put("tried", "slurm, kubernetes");
    reversed.put("rank", "RANK");
    reversed.put("job", "slurm sidecar");
    Map<String, String> kept = Map.copyOf(attribution); // one instance, as a file's lines share
    Supplier<LogRecord.Builder> base =
        () ->
            LogRecord.builder().host("gpu-node-7").job("4242").rank(300).localRank(1).gpu(3).stream(
                    "stdout")
                .source("/var/log/rank3.log")
                .sourceId("2049:131")
                .offset(1)
                .eventTime(Instant.parse("2026-11-26T10:00:00Z"))
                .text("step 1")
                .gpuUuid("GPU-0f2c")
                .attribution(kept);
    List<LogRecord> variants =
        List.of(
            base.get().build(),
            base.get().text("step 2").offset(7).build(),
            base.get().host("gpu-node-8").build(),
            base.get().job(null).build(),
            base.get().rank(301).build(),
            base.get().rank(null).build(),
            base.get().localRank(2).build(),
            base.get().gpu(null).build(),
            base.get().kind(RecordKind.KERNEL).build(),
            base.get().stream("stderr").build(),
            base.get().source("/var/log/rank4.log").build(),
            base.get().sourceId(null).build(),
            base.get().gpuUuid(null).build(),
            base.get().gpuUuid("MIG-1").build(),
            base.get().attribution(Map.of("job", "env")).build(),
            base.get().attribution(attribution).build(),
            base.get().attribution(reversed).build(),
            base.get().attribution(null).gpuUuid(null).build(),
            base.get().source("/" + "p".repeat(5000)).build(),
            base.get().attribution(Map.of("tried", "x".repeat(5000))).build());
    // runs of one source and every change between any two, in a fixed random order
    SplittableRandom random = new SplittableRandom(35);
    for (int i = 0; i < 3000; i++) {
      LogRecord r = variants.get(i < 2 * variants.size() ? i / 2 : random.nextInt(variants.size()));
      assertArrayEquals(
          WireJson.mapper().writeValueAsBytes(r),
          encoder.encode(r),
          () -> new String(encoder.encode(r), StandardCharsets.UTF_8));
    }
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
