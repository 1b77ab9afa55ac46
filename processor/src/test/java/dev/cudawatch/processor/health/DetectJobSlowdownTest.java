package dev.cudawatch.processor.health;

import static dev.cudawatch.processor.health.DetectSlowRanksTest.harness;
import static dev.cudawatch.processor.health.DetectSlowRanksTest.sample;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.wire.Incident;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.junit.jupiter.api.Test;

/**
 * An 8-rank job at 0.50 s per step whose every rank slows to 0.75 s at step 200: one job_slowdown
 * with the change point in the bucket where it happened, found about a minute later (six 10 s
 * buckets); a single slow rank, or a steady job, is none.
 */
class DetectJobSlowdownTest {
  private static final long T0 = 1_795_000_000_000L;
  private static final Duration TTL = Duration.ofHours(24);

  private static List<Incident> run(
      String job, int steps, java.util.function.IntBinaryOperator slow) throws Exception {
    try (var h =
        harness(
            new KeyedProcessOperator<>(new DetectJobSlowdown(HealthSettings.defaults(), TTL)))) {
      h.setProcessingTime(0);
      for (int step = 0; step < steps; step++) {
        for (int r = 0; r < 8; r++) {
          double s = slow.applyAsInt(r, step) == 1 ? 0.75 : 0.50;
          h.processElement(sample(job, r, step, s), 0);
        }
      }
      List<Incident> out = h.extractOutputValues();
      h.setProcessingTime(TTL.toMillis() + 1);
      assertEquals(0, h.numKeyedStateEntries(), "no state left");
      assertEquals(0, h.numEventTimeTimers() + h.numProcessingTimeTimers(), "no timers left");
      return out;
    }
  }

  @Test
  void theWholeJobSlowingDownIsFoundWithItsChangePoint() throws Exception {
    List<Incident> out = run("job-s", 400, (r, step) -> step >= 200 ? 1 : 0);
    assertEquals(1, out.size(), out.toString());
    Incident i = out.get(0);
    assertEquals("job_slowdown", i.incidentClass());
    assertEquals("job-s", i.job());
    assertEquals(Instant.ofEpochMilli(T0 + 200_000L).toString(), i.fields().get("change_point"));
    double ratio = ((Number) i.fields().get("slowdown_ratio")).doubleValue();
    assertTrue(ratio > 1.4 && ratio < 1.6, "1.5x: " + ratio);
    long delay = i.eventTime().toEpochMilli() - (T0 + 200_000L);
    assertTrue(delay >= 60_000 && delay <= 70_000, "six buckets later: " + delay);
    assertEquals(8L, i.fields().get("ranks"));
  }

  @Test
  void anExitEndsTheJobsState() throws Exception {
    try (var h =
        harness(
            new KeyedProcessOperator<>(new DetectJobSlowdown(HealthSettings.defaults(), TTL)))) {
      for (int step = 0; step < 100; step++) {
        h.processElement(sample("job-x", step % 8, step, 0.5), 0);
      }
      assertTrue(h.numKeyedStateEntries() > 0);
      h.processElement(StepSample.exit("job-x", T0 + 100_000L), 0);
      assertEquals(0, h.numKeyedStateEntries(), "no state left");
      assertEquals(0, h.numEventTimeTimers() + h.numProcessingTimeTimers(), "no timers left");
    }
  }

  @Test
  void oneSlowRankOrASteadyJobIsNoSlowdown() throws Exception {
    assertTrue(run("job-r", 400, (r, step) -> r == 3 && step >= 200 ? 1 : 0).isEmpty());
    assertTrue(run("job-q", 400, (r, step) -> 0).isEmpty());
  }
}
