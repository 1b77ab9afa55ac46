package dev.cudawatch.processor.rules;

import static dev.cudawatch.processor.rules.RuleFixtures.incident;
import static dev.cudawatch.processor.rules.RuleFixtures.match;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.config.ConfigException;
import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.Incident;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;
import org.junit.jupiter.api.Test;

class CountRuleTest {
  private static final RuleSet RULES = RuleFixtures.RULES;
  private static final long MIN = 60_000;

  private static void feed(
      KeyedOneInputStreamOperatorTestHarness<String, RuleEvent, Alert> h, Incident i)
      throws Exception {
    for (RuleEvent e : match(RULES, i)) {
      h.processElement(e, e.eventTime());
    }
  }

  @Test
  void differentJobsFailingOnOneGpuMarkALemonGpu() throws Exception {
    try (KeyedOneInputStreamOperatorTestHarness<String, RuleEvent, Alert> h =
        ProcessFunctionTestHarnesses.forKeyedProcessFunction(
            new CountRule(RULES), RuleEvent::key, Types.STRING)) {
      h.open();
      long t0 = 5_000_000;
      feed(h, incident("x1", "kernel_exception", "node-4", "job-a", Map.of("gpu", 5L), t0, true));
      feed(
          h,
          incident("x2", "kernel_exception", "node-4", "job-a", Map.of("gpu", 5L), t0 + MIN, true));
      assertTrue(
          h.extractOutputValues().stream().noneMatch(a -> a.alertName().equals("LemonGpu")),
          "one job failing twice is no lemon");
      feed(
          h, incident("x3", "ecc_error", "node-4", "job-b", Map.of("gpu", 5L), t0 + 2 * MIN, true));
      Alert lemon =
          h.extractOutputValues().stream()
              .filter(a -> a.alertName().equals("LemonGpu"))
              .findFirst()
              .orElseThrow();
      assertEquals("node-4", lemon.labels().get("host"));
      assertEquals("5", lemon.labels().get("gpu"));
      assertTrue(
          lemon.annotations().get("summary").contains("failed 2 different jobs"),
          lemon.annotations().get("summary"));
      h.processWatermark(new Watermark(t0 + 25 * 60 * MIN));
      assertEquals(0, h.numEventTimeTimers());
      assertEquals(0, h.numKeyedStateEntries());
    }
  }

  @Test
  void theSameUserFrameFailingOnTwoHostsIsACodeBug() throws Exception {
    try (KeyedOneInputStreamOperatorTestHarness<String, RuleEvent, Alert> h =
        ProcessFunctionTestHarnesses.forKeyedProcessFunction(
            new CountRule(RULES), RuleEvent::key, Types.STRING)) {
      h.open();
      long t0 = 9_000_000;
      Map<String, Object> f = Map.of("user_frame", "/srv/train.py:88", "gpu", 0L);
      feed(h, incident("y1", "device_assert", "node-1", "job-a", f, t0, true));
      feed(h, incident("y2", "device_assert", "node-1", "job-b", f, t0 + MIN, true));
      assertTrue(
          h.extractOutputValues().stream().noneMatch(a -> a.alertName().equals("CodeBug")),
          "one host is not yet a pattern");
      feed(h, incident("y3", "device_assert", "node-2", "job-c", f, t0 + 2 * MIN, true));
      Alert bug =
          h.extractOutputValues().stream()
              .filter(a -> a.alertName().equals("CodeBug"))
              .findFirst()
              .orElseThrow();
      assertEquals("/srv/train.py:88", bug.labels().get("user_frame"));
      assertTrue(
          bug.annotations().get("summary").contains("on 2 different hosts"),
          bug.annotations().get("summary"));
    }
  }

  @Test
  void threeIllegalAccessesOnOneGpuFireThenResolveAndLeaveNothingBehind() throws Exception {
    try (KeyedOneInputStreamOperatorTestHarness<String, RuleEvent, Alert> h =
        ProcessFunctionTestHarnesses.forKeyedProcessFunction(
            new CountRule(RULES), RuleEvent::key, Types.STRING)) {
      h.open();
      long t0 = 1_000_000;
      for (int i = 0; i < 3; i++) {
        for (RuleEvent e :
            match(
                RULES,
                incident("a" + i, "illegal_memory_access", "node-1", 2, t0 + i * MIN, true))) {
          h.processElement(e, e.eventTime());
        }
      }
      // another GPU and a consequence do not count toward node-1 GPU 2
      for (RuleEvent e :
          match(RULES, incident("b", "illegal_memory_access", "node-1", 3, t0, true))) {
        h.processElement(e, e.eventTime());
      }
      assertTrue(
          match(RULES, incident("c", "illegal_memory_access", "node-1", 2, t0, false)).isEmpty());
      List<Alert> out = h.extractOutputValues();
      assertEquals(1, out.size());
      Alert firing = out.get(0);
      assertEquals(Alert.State.FIRING, firing.state());
      assertEquals("RepeatedIllegalMemoryAccess", firing.alertName());
      assertEquals("critical", firing.labels().get("severity"));
      assertEquals("2", firing.labels().get("gpu"));
      assertEquals(
          "3 illegal memory accesses on node-1 GPU 2 within 10 minutes",
          firing.annotations().get("summary"));

      // a duplicate of a counted incident changes nothing
      for (RuleEvent e :
          match(RULES, incident("a1", "illegal_memory_access", "node-1", 2, t0 + MIN, true))) {
        h.processElement(e, e.eventTime());
      }
      assertEquals(1, h.extractOutputValues().size());

      h.processWatermark(new Watermark(t0 + 10 * MIN + 1)); // the first incident leaves the window
      out = h.extractOutputValues();
      assertEquals(2, out.size());
      Alert resolved = out.get(1);
      assertEquals(Alert.State.RESOLVED, resolved.state());
      assertEquals(firing.fingerprint(), resolved.fingerprint(), "one alert, one fingerprint");
      assertTrue(resolved.endsAt() != null);

      h.processWatermark(
          new Watermark(t0 + 25 * 60 * MIN)); // past every default window (24 h at most)
      assertEquals(0, h.numEventTimeTimers(), "no timers left");
      assertEquals(0, h.numKeyedStateEntries(), "no state left");
    }
  }

  @Test
  void restoringWithChangedRulesKeepsTheWindowsCounted() throws Exception {
    long t0 = 1_000_000;
    OperatorSubtaskState snapshot;
    try (KeyedOneInputStreamOperatorTestHarness<String, RuleEvent, Alert> h =
        ProcessFunctionTestHarnesses.forKeyedProcessFunction(
            new CountRule(RULES), RuleEvent::key, Types.STRING)) {
      h.open();
      feed(h, incident("r1", "illegal_memory_access", "node-1", 2, t0, true));
      feed(h, incident("r2", "illegal_memory_access", "node-1", 2, t0 + MIN, true));
      snapshot = h.snapshot(1, t0 + MIN);
    }
    // the site raises the threshold to 4 and restarts from the savepoint
    RuleSet reloaded =
        RuleSet.load(
            Map.of(
                "site.yaml",
                ("rules:\n  - name: RepeatedIllegalMemoryAccess\n    type: count\n"
                        + "    classes: [illegal_memory_access]\n    key: [host, gpu]\n"
                        + "    window_seconds: 600\n    threshold: 4\n")
                    .getBytes(StandardCharsets.UTF_8)));
    try (KeyedOneInputStreamOperatorTestHarness<String, RuleEvent, Alert> h =
        new KeyedOneInputStreamOperatorTestHarness<>(
            new KeyedProcessOperator<>(new CountRule(reloaded)), RuleEvent::key, Types.STRING)) {
      h.initializeState(snapshot);
      h.open();
      for (RuleEvent e :
          match(
              reloaded, incident("r3", "illegal_memory_access", "node-1", 2, t0 + 2 * MIN, true))) {
        h.processElement(e, e.eventTime());
      }
      assertTrue(h.extractOutputValues().isEmpty(), "3 of the new threshold of 4");
      for (RuleEvent e :
          match(
              reloaded, incident("r4", "illegal_memory_access", "node-1", 2, t0 + 3 * MIN, true))) {
        h.processElement(e, e.eventTime());
      }
      List<Alert> out = h.extractOutputValues();
      assertEquals(1, out.size(), "the two incidents counted before the restart still count");
      assertEquals("4", out.get(0).annotations().get("value"));
    }
  }

  @Test
  void theFingerprintDependsOnlyOnLabels() {
    RuleSpec r = RULES.rules().get(0);
    Alert a = CountRule.alert(r, Map.of("host", "h", "gpu", "1"), 3, Alert.State.FIRING, 1, null);
    Alert b = CountRule.alert(r, Map.of("host", "h", "gpu", "1"), 7, Alert.State.RESOLVED, 5, 9L);
    assertEquals(a.fingerprint(), b.fingerprint());
  }

  @Test
  void aBadRuleFileIsRejectedByName() {
    ConfigException e =
        assertThrows(
            ConfigException.class,
            () ->
                RuleSet.load(
                    Map.of(
                        "site.yaml",
                        "rules:\n  - name: X\n    type: count\n    classes: [cuda_oom]\n    key: [colour]\n    window_seconds: 60\n    threshold: 2\n"
                            .getBytes(StandardCharsets.UTF_8))));
    assertTrue(
        e.getMessage().contains("site.yaml: rule 'X': unknown key field 'colour'"), e.getMessage());
    RuleSet site =
        RuleSet.load(
            Map.of(
                "site.yaml",
                "rules:\n  - name: RepeatedOutOfMemory\n    type: count\n    classes: [cuda_oom]\n    key: [host]\n    window_seconds: 60\n    threshold: 5\n"
                    .getBytes(StandardCharsets.UTF_8)));
    assertEquals(
        5,
        site.rules().stream()
            .filter(r -> r.name().equals("RepeatedOutOfMemory"))
            .findFirst()
            .orElseThrow()
            .threshold());
  }
}
