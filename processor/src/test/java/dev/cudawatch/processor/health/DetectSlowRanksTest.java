package dev.cudawatch.processor.health;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.wire.Incident;
import java.time.Duration;
import java.util.List;
import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.typeutils.runtime.PojoSerializer;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;

/**
 * An 8-rank job at 0.50 s per step, with jitter; rank 5 (node-b GPU 1) drops to 0.80 s per step
 * from step 100 on. Found once, 60 s after it slowed (the configured duration), named with its
 * host, GPU and ratio; no other rank, and no rank of a job whose ranks all slow down together.
 */
class DetectSlowRanksTest {
  private static final long T0 = 1_795_000_000_000L;
  private static final Duration TTL = Duration.ofHours(24);

  static KeyedOneInputStreamOperatorTestHarness<String, StepSample, Incident> harness(
      KeyedProcessOperator<String, StepSample, Incident> op) throws Exception {
    var h = new KeyedOneInputStreamOperatorTestHarness<>(op, StepSample::job, Types.STRING);
    h.open();
    return h;
  }

  /** Rank r's step {@code step}: every rank prints once a second of event time. */
  static StepSample sample(String job, int r, int step, double seconds) {
    double jitter = 1 + 0.04 * Math.sin(step * 7.0 + r * 3.0);
    return new StepSample(
        job,
        r,
        r < 4 ? "node-a" : "node-b",
        r % 4,
        "GPU-" + job + "-" + r,
        T0 + step * 1000L + r * 10L,
        seconds * jitter);
  }

  @Test
  void theSlowRankIsFoundOnceWithItsHostGpuAndRatio() throws Exception {
    try (var h =
        harness(new KeyedProcessOperator<>(new DetectSlowRanks(HealthSettings.defaults(), TTL)))) {
      h.setProcessingTime(0);
      for (int step = 0; step < 300; step++) {
        for (int r = 0; r < 8; r++) {
          double s = (r == 5 && step >= 100) ? 0.80 : 0.50;
          h.processElement(sample("job-1", r, step, s), 0);
        }
      }
      List<Incident> out = h.extractOutputValues();
      assertEquals(1, out.size(), "one slow rank, reported once: " + out);
      Incident i = out.get(0);
      assertEquals("slow_rank", i.incidentClass());
      assertEquals(5L, i.fields().get("rank"));
      assertEquals("node-b", i.host());
      assertEquals(1L, i.fields().get("gpu"));
      assertEquals("GPU-job-1-5", i.fields().get("gpu_uuid"));
      double ratio = ((Number) i.fields().get("slowdown_ratio")).doubleValue();
      assertTrue(ratio > 1.4 && ratio < 1.8, "about 1.6x: " + ratio);
      assertTrue(
          ((Number) i.fields().get("own_baseline_step_seconds")).doubleValue() < 0.55,
          "its own history before it slowed: " + i.fields());
      long delay = i.eventTime().toEpochMilli() - (T0 + 100_000L);
      assertTrue(
          delay >= 60_000 && delay <= 65_000, "found 60 s (+ the median's lag) after: " + delay);
      assertTrue(i.summary().contains("Rank 5 of job-1 on node-b GPU 1"), i.summary());
      assertEquals("warning", i.severity());
      assertTrue(!i.explanation().isBlank() && !i.nextSteps().isEmpty());

      h.setProcessingTime(TTL.toMillis() + 1);
      assertEquals(0, h.numKeyedStateEntries(), "no state left");
      assertEquals(0, h.numEventTimeTimers() + h.numProcessingTimeTimers(), "no timers left");
    }
  }

  @Test
  void aWholeJobSlowingDownIsNoSlowRank() throws Exception {
    try (var h =
        harness(new KeyedProcessOperator<>(new DetectSlowRanks(HealthSettings.defaults(), TTL)))) {
      for (int step = 0; step < 300; step++) {
        for (int r = 0; r < 8; r++) {
          h.processElement(sample("job-2", r, step, step >= 100 ? 0.9 : 0.5), 0);
        }
      }
      assertTrue(h.extractOutputValues().isEmpty(), h.extractOutputValues().toString());
      h.processElement(StepSample.exit("job-2", T0 + 300_000L), 0);
      assertEquals(0, h.numKeyedStateEntries(), "the job exited: its state went with it");
      assertEquals(0, h.numEventTimeTimers() + h.numProcessingTimeTimers(), "no timers left");
    }
  }

  @Test
  void aBriefStallIsNotPersistent() throws Exception {
    try (var h =
        harness(new KeyedProcessOperator<>(new DetectSlowRanks(HealthSettings.defaults(), TTL)))) {
      for (int step = 0; step < 300; step++) {
        for (int r = 0; r < 4; r++) {
          double s = r == 2 && step >= 100 && step < 140 ? 2.0 : 0.5; // 40 s of a slow disk
          h.processElement(sample("job-3", r, step, s), 0);
        }
      }
      assertTrue(h.extractOutputValues().isEmpty(), h.extractOutputValues().toString());
    }
  }

  @Test
  void stateHasExplicitSerializersNotKryo() {
    assertInstanceOf(
        PojoSerializer.class,
        TypeInformation.of(RankPace.class).createSerializer(new SerializerConfigImpl()));
    assertInstanceOf(
        PojoSerializer.class,
        TypeInformation.of(StepSample.class).createSerializer(new SerializerConfigImpl()));
  }
}
