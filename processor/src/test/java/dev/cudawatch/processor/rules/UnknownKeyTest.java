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

/** A rule never skips an incident silently: an unknown key field is counted as {@code unknown}. */
class UnknownKeyTest {
  private static final Map<String, Object> NO_GPU =
      Map.of(
          "attribution",
          Map.of("tried", "log text, cudawatch run environment (CUDA_VISIBLE_DEVICES)"));

  @Test
  void illegalAccessesOfUnknownGpusAreCountedPerHostAndTheAlertSaysSo() throws Exception {
    try (KeyedOneInputStreamOperatorTestHarness<String, RuleEvent, Alert> h =
        ProcessFunctionTestHarnesses.forKeyedProcessFunction(
            new CountRule(RuleFixtures.RULES), RuleEvent::key, Types.STRING)) {
      h.open();
      long t0 = 1_000_000;
      for (int j = 0; j < 3; j++) {
        for (RuleEvent e :
            match(
                RuleFixtures.RULES,
                incident(
                    "i" + j,
                    "illegal_memory_access",
                    "node-7",
                    "job-" + j,
                    NO_GPU,
                    t0 + j * 1000,
                    true))) {
          h.processElement(e, e.eventTime());
        }
      }
      Alert a =
          h.extractOutputValues().stream()
              .filter(x -> x.alertName().equals("RepeatedIllegalMemoryAccess"))
              .findFirst()
              .orElseThrow(() -> new AssertionError("no alert for unknown GPUs"));
      assertEquals("unknown", a.labels().get("gpu"));
      assertEquals("node-7", a.labels().get("host"));
      String why = a.annotations().get("unknown");
      assertTrue(why.startsWith("gpu unknown"), why);
      assertTrue(why.contains("CUDA_VISIBLE_DEVICES"), "the sources tried: " + why);
      h.processWatermark(new Watermark(t0 + 3_600_000));
      assertEquals(0, h.numEventTimeTimers());
      assertEquals(0, h.numKeyedStateEntries());
    }
  }

  @Test
  void aRuleThatRequiresTheGpuLeavesUnknownGpusOutAndAJobRuleUnknownJobs() {
    List<RuleEvent> events =
        match(
            RuleFixtures.RULES,
            incident("k1", "kernel_exception", "node-1", null, NO_GPU, 1000, true));
    assertTrue(events.stream().noneMatch(e -> e.rule().equals("LemonGpu")), "require: [gpu]");
    List<RuleEvent> ooms =
        match(RuleFixtures.RULES, incident("o1", "cuda_oom", "node-1", null, NO_GPU, 1000, true));
    assertTrue(ooms.stream().noneMatch(e -> e.rule().equals("RepeatedOutOfMemory")));
    assertTrue(
        ooms.stream().anyMatch(e -> e.rule().equals("FleetErrorSpike")),
        "rules keyed by what it has still count it");
  }
}
