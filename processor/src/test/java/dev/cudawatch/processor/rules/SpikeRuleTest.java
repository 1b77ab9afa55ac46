package dev.cudawatch.processor.rules;

import static dev.cudawatch.processor.rules.RuleFixtures.incident;
import static dev.cudawatch.processor.rules.RuleFixtures.match;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.wire.Alert;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;
import org.junit.jupiter.api.Test;

class SpikeRuleTest {
  private static final RuleSet RULES = RuleFixtures.RULES;
  private static final long MIN = 60_000;
  private int seq;

  private void oom(KeyedOneInputStreamOperatorTestHarness<String, RuleEvent, Alert> h, long t)
      throws Exception {
    String id = "o" + seq++;
    for (RuleEvent e :
        match(
            RULES, incident(id, "cuda_oom", "node-" + seq % 7, "job-" + seq, Map.of(), t, true))) {
      if (e.type().equals(RuleSpec.SPIKE)) {
        h.processElement(e, e.eventTime());
      }
    }
  }

  private static List<Alert> spikes(
      KeyedOneInputStreamOperatorTestHarness<String, RuleEvent, Alert> h) {
    return h.extractOutputValues().stream()
        .filter(a -> a.alertName().equals("FleetErrorSpike"))
        .toList();
  }

  @Test
  void aClassRisingFarAboveItsBaselineFiresThenResolvesAndLeavesNothing() throws Exception {
    try (KeyedOneInputStreamOperatorTestHarness<String, RuleEvent, Alert> h =
        ProcessFunctionTestHarnesses.forKeyedProcessFunction(
            new SpikeRule(RULES), RuleEvent::key, Types.STRING)) {
      h.open();
      long t0 = 100 * 60 * MIN;
      // baseline: 2 OOMs an hour for 5 hours (~0.17 per 5 minutes)
      for (int i = 0; i < 10; i++) {
        oom(h, t0 + i * 30 * MIN);
        h.processWatermark(new Watermark(t0 + i * 30 * MIN));
      }
      assertTrue(spikes(h).isEmpty(), "a steady trickle is no spike");
      long burst = t0 + 5 * 60 * MIN;
      for (int i = 0; i < 9; i++) {
        oom(h, burst + i * 10_000);
      }
      assertTrue(spikes(h).isEmpty(), "below the threshold of 10");
      oom(h, burst + 95_000);
      List<Alert> fired = spikes(h);
      assertEquals(1, fired.size());
      Alert a = fired.get(0);
      assertEquals(Alert.State.FIRING, a.state());
      assertEquals("cuda_oom", a.labels().get("class"));
      assertEquals("10", a.annotations().get("value"));
      assertTrue(
          a.annotations().get("summary").startsWith("10 cuda_oom incidents across the fleet in 5"),
          a.annotations().get("summary"));

      h.processWatermark(new Watermark(burst + 10 * MIN));
      List<Alert> after = spikes(h);
      assertEquals(2, after.size(), "resolves once the burst leaves the recent window");
      assertEquals(Alert.State.RESOLVED, after.get(1).state());
      assertEquals(a.fingerprint(), after.get(1).fingerprint());

      h.processWatermark(new Watermark(burst + 8 * 60 * MIN)); // past the 6 h baseline
      assertEquals(0, h.numEventTimeTimers(), "no timers left");
      assertEquals(0, h.numKeyedStateEntries(), "no state left");
    }
  }

  @Test
  void aBusyBaselineRaisesTheBar() throws Exception {
    try (KeyedOneInputStreamOperatorTestHarness<String, RuleEvent, Alert> h =
        ProcessFunctionTestHarnesses.forKeyedProcessFunction(
            new SpikeRule(RULES), RuleEvent::key, Types.STRING)) {
      h.open();
      long t0 = 100 * 60 * MIN;
      // 12 OOMs every 5 minutes for 5 hours: 12 per window is normal here
      for (long t = t0; t < t0 + 5 * 60 * MIN; t += 25_000) {
        oom(h, t);
      }
      h.processWatermark(new Watermark(t0 + 5 * 60 * MIN));
      int coldStart = spikes(h).size(); // a fresh job's first window has no baseline to judge by
      long now = t0 + 5 * 60 * MIN;
      for (int i = 0; i < 30; i++) {
        oom(h, now + i * 5_000); // 30 in 2.5 minutes: ~2.5x, under the factor of 5
      }
      List<Alert> fired = spikes(h).subList(coldStart, spikes(h).size());
      assertTrue(fired.isEmpty(), fired.toString());
    }
  }
}
