package dev.cudawatch.processor.health;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.apache.flink.streaming.api.operators.StreamFlatMap;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;

/**
 * Step times leave the source chain at most once per rank per {@link ExtractStepTimes#SAMPLE_MS} of
 * the lines' own time: a tqdm bar drawn ten times a second gives two samples a second per rank,
 * each rank on its own, and a job's exit always passes.
 */
class ExtractStepTimesTest {
  static final Instant T0 = Instant.parse("2026-11-22T03:00:00Z");

  @Test
  void aBarDrawnTenTimesASecondGivesTwoSamplesASecondPerRank() throws Exception {
    try (OneInputStreamOperatorTestHarness<LogRecord, StepSample> h =
        new OneInputStreamOperatorTestHarness<>(
            new StreamFlatMap<>(new ExtractStepTimes(Map.of())))) {
      h.open();
      for (int i = 0; i < 20; i++) { // two seconds of redraws, 100 ms apart, on two ranks
        for (int rank = 0; rank < 2; rank++) {
          h.processElement(bar("train-7", rank, i * 100L, 2.0 + i * 0.01), i);
        }
      }
      h.processElement(bar("train-7", 0, 2000, 2.5), 21);
      h.processElement(
          LogRecord.builder()
              .host("gpu-node-1")
              .job("train-7")
              .kind(RecordKind.EXIT)
              .source("run")
              .eventTime(T0.plusMillis(2050))
              .text("exit 0")
              .build(),
          22);

      List<StepSample> out = h.extractOutputValues();
      List<String> got =
          out.stream().map(s -> s.rank + "@" + (s.eventTime - T0.toEpochMilli())).toList();
      assertEquals(
          List.of(
              "0@0", "1@0", "0@500", "1@500", "0@1000", "1@1000", "0@1500", "1@1500", "0@2000",
              "-1@2050"),
          got);
      assertEquals(1.0 / 2.05, out.get(2).seconds, 1e-9, "the sampled line's own rate");
    }
  }

  @Test
  void linesWithoutAStepTimeDoNotHoldTheNextOneBack() throws Exception {
    try (OneInputStreamOperatorTestHarness<LogRecord, StepSample> h =
        new OneInputStreamOperatorTestHarness<>(
            new StreamFlatMap<>(new ExtractStepTimes(Map.of())))) {
      h.open();
      h.processElement(line("train-8", 3, 0, "loss=0.31 lr=3e-4"), 0);
      h.processElement(bar("train-8", 3, 100, 4.0), 1);
      assertEquals(1, h.extractOutputValues().size(), "the first step time after other lines");
    }
  }

  private static LogRecord bar(String job, int rank, long ms, double itPerSecond) {
    return line(
        job,
        rank,
        ms,
        String.format(
            java.util.Locale.ROOT,
            "Epoch 0:  12%%|█▏        | 120/1000 [01:00<07:20, %.2fit/s, loss=0.412, v_num=0]",
            itPerSecond));
  }

  private static LogRecord line(String job, int rank, long ms, String text) {
    return LogRecord.builder()
        .host("gpu-node-1")
        .job(job)
        .rank(rank)
        .source("/logs/" + job + "-" + rank + ".log")
        .eventTime(T0.plusMillis(ms))
        .text(text)
        .build();
  }
}
