package dev.cudawatch.processor.functions;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.diagnosis.trend.TrendSettings;
import dev.cudawatch.processor.records.IncidentCodec;
import dev.cudawatch.processor.records.KryoFree;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.operators.co.KeyedCoProcessOperator;
import org.apache.flink.streaming.util.KeyedTwoInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;
import org.junit.jupiter.api.Test;

class DetectMemoryTrendTest {
  private static final long MIB = 1 << 20;

  private static KeyedTwoInputStreamOperatorTestHarness<String, LogRecord, Incident, Incident>
      harness() throws Exception {
    return ProcessFunctionTestHarnesses.forKeyedCoProcessFunction(
        new DetectMemoryTrend(
            TrendSettings.defaults(), Duration.ofMinutes(10), Duration.ofHours(1)),
        DetectMemoryTrend::keyOf,
        DetectMemoryTrend::keyOf,
        Types.STRING);
  }

  /** One nvidia-smi row for GPU 0 at {@code ms} after T0 with {@code usedMib} of 81920 MiB. */
  private static String row(long ms, long usedMib) {
    long s = ms / 1000;
    return String.format(
        "2026/11/22 03:%02d:%02d.%03d, 0, 00000000:3B:00.0, %d, 81920",
        s / 60, s % 60, ms % 1000, usedMib);
  }

  private static Incident oom(long ms, Map<String, Object> fields) {
    return Records.incident(
        "oom", "cuda_oom", "gpu-node-1", fields, Records.T0.toEpochMilli() + ms);
  }

  @Test
  void warnsOnceWhileMemoryClimbsToFull() throws Exception {
    try (var h = harness()) {
      for (int i = 0; i < 120; i++) {
        long used = Math.min(80 * 1024, 1024L * i); // MiB: +2 GiB/s at one sample per 500 ms
        h.processElement1(Records.memory(i, row(i * 500L, used)), i);
      }
      List<Incident> out = h.extractOutputValues();
      assertEquals(1, out.size(), "one warning, not one per sample");
      Incident i = out.get(0);
      assertEquals("memory_leak", i.incidentClass());
      assertEquals(0L, i.fields().get("gpu"));
      assertEquals("0000:3b:00", i.fields().get("pci"));
      assertTrue((Long) i.fields().get("predicted_seconds_to_full") > 0);
    }
  }

  @Test
  void anOomAfterSteadyGrowthIsALeak() throws Exception {
    try (var h = harness()) {
      for (int i = 0; i < 40; i++) {
        h.processElement1(Records.memory(i, row(i * 1000L, 20_000 + 50L * i)), i);
      }
      h.processElement2(oom(40_000, Map.of("gpu", 0L, "tried_to_allocate_bytes", 2 * MIB)), 40);
      Incident i = h.extractOutputValues().get(0);
      assertEquals("steady_leak", i.fields().get("memory_before"));
      assertEquals(50 * MIB, ((Long) i.fields().get("memory_growth_bytes_per_second")), MIB);
      assertTrue(i.nextSteps().get(0).contains("steady leak"), i.nextSteps().get(0));
      assertEquals("the catalog's step", i.nextSteps().get(1));
    }
  }

  @Test
  void anOomAfterAJumpIsASpikeAndFreeReservedMemoryIsFragmentation() throws Exception {
    try (var h = harness()) {
      for (int i = 0; i < 30; i++) {
        long used = i < 27 ? 30_000 + (i % 3) * 100 : 75_000; // flat, then +45 GiB in 3 s
        h.processElement1(Records.memory(i, row(i * 1000L, used)), i);
      }
      h.processElement2(oom(30_000, Map.of("gpu", 0L)), 30);
      assertEquals("sudden_spike", h.extractOutputValues().get(0).fields().get("memory_before"));
      h.processElement2(
          oom(
              30_000,
              Map.of(
                  "gpu", 0L,
                  "tried_to_allocate_bytes", 1024 * MIB,
                  "reserved_unallocated_bytes", 4096 * MIB)),
          30);
      assertEquals("fragmentation", h.extractOutputValues().get(1).fields().get("memory_before"));
    }
  }

  @Test
  void anOomWithoutSamplesPassesUnchangedAndANewJobStartsANewTrend() throws Exception {
    try (var h = harness()) {
      Incident bare = oom(1_000, Map.of("gpu", 0L));
      h.processElement2(bare, 1);
      assertEquals(bare, h.extractOutputValues().get(0));

      for (int i = 0; i < 40; i++) {
        h.processElement1(Records.memory(i, "job-a", row(i * 1000L, 20_000 + 50L * i)), i);
      }
      h.processElement1(Records.memory(41, "job-b", row(41_000, 2_000)), 41);
      h.processElement2(oom(41_500, Map.of("gpu", 0L)), 42);
      Map<String, Object> f = h.extractOutputValues().get(1).fields();
      assertEquals("steady_high", f.get("memory_before"), "job-b's own sample, not job-a's leak");
      assertEquals(1L, f.get("memory_samples"), f.toString());
      assertNull(f.get("memory_growth_bytes_per_second"), f.toString());
    }
  }

  @Test
  void aFlatHistoryThenOneJumpIsASpikeEvenWhenTheOomComesMinutesAfterItAndNoStateIsLeft()
      throws Exception {
    OperatorSubtaskState later;
    try (var h = kryoFree()) {
      h.open();
      h.setStateTtlProcessingTime(0);
      long ms = 0;
      int n = 0;
      for (; ms < 60_000; ms += 500) { // flat at 2 GiB, the allocator's to and fro around it
        h.processElement1(Records.memory(ms, row(ms, 2_048 + (n % 3) * 64)), n++);
      }
      for (; ms < 90_000; ms += 500) { // one jump of about 42 GiB, held 30 s
        h.processElement1(Records.memory(ms, row(ms, 45_000)), n++);
      }
      long oomAt = ms;
      for (; ms < oomAt + 180_000; ms += 500) { // the card freed; the OOM's line is 3 min late
        h.processElement1(Records.memory(ms, row(ms, 0)), n++);
      }
      h.processElement2(oom(oomAt, Map.of("gpu", 0L, "tried_to_allocate_bytes", 40_960 * MIB)), n);
      Incident i = h.extractOutputValues().get(0);
      assertEquals("sudden_spike", i.fields().get("memory_before"), i.fields().toString());
      assertEquals(
          (45_000 - 2_048 - 64) * MIB, (Long) i.fields().get("memory_jump_bytes"), 64 * MIB);
      assertEquals(30.0, (Double) i.fields().get("memory_jump_seconds_before"), 0.05);
      assertEquals(45_000 / 81_920.0, (Double) i.fields().get("memory_used_fraction"), 0.005);
      assertTrue(i.nextSteps().get(0).contains("sudden spike"), i.nextSteps().get(0));
      h.setStateTtlProcessingTime(Duration.ofHours(1).toMillis() + 1);
      later = h.snapshot(1, 1);
    }
    try (var h = kryoFree()) {
      h.initializeState(later);
      h.open();
      assertEquals(0, h.numKeyedStateEntries(), "a GPU quiet for its TTL leaves no state");
      assertEquals(0, h.numEventTimeTimers() + h.numProcessingTimeTimers(), "and no timers");
    }
  }

  private static KeyedTwoInputStreamOperatorTestHarness<String, LogRecord, Incident, Incident>
      kryoFree() throws Exception {
    return KryoFree.harness(
        new KeyedTwoInputStreamOperatorTestHarness<>(
            new KeyedCoProcessOperator<>(
                new DetectMemoryTrend(
                    TrendSettings.defaults(), Duration.ofMinutes(10), Duration.ofHours(1))),
            DetectMemoryTrend::keyOf,
            DetectMemoryTrend::keyOf,
            Types.STRING),
        IncidentCodec.TYPE.serializer());
  }

  @Test
  void theSamplesSurviveARestoreWithoutKryoAndLeaveWithTheirTtl() throws Exception {
    OperatorSubtaskState kept;
    try (var h = kryoFree()) {
      h.open();
      h.setStateTtlProcessingTime(0);
      for (int i = 0; i < 40; i++) {
        h.processElement1(Records.memory(i, "job-a", row(i * 1000L, 20_000 + 50L * i)), i);
      }
      kept = h.snapshot(1, 1);
    }
    OperatorSubtaskState later;
    try (var h = kryoFree()) {
      h.initializeState(kept);
      h.open();
      h.setStateTtlProcessingTime(1000);
      h.processElement2(oom(40_000, Map.of("gpu", 0L, "tried_to_allocate_bytes", 2 * MIB)), 40);
      assertEquals(
          "steady_leak",
          h.extractOutputValues().get(0).fields().get("memory_before"),
          "the restored samples still tell the leak");
      assertTrue(h.numKeyedStateEntries() > 0);
      h.setStateTtlProcessingTime(Duration.ofHours(1).toMillis() + 1001);
      later = h.snapshot(2, 2);
    }
    try (var h = kryoFree()) {
      h.initializeState(later);
      h.open();
      assertEquals(0, h.numKeyedStateEntries(), "a GPU quiet for its TTL leaves no state");
      assertEquals(0, h.numEventTimeTimers() + h.numProcessingTimeTimers(), "and no timers");
    }
  }
}
