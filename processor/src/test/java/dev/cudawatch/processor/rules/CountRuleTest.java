package dev.cudawatch.processor.rules;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.config.ConfigException;
import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.Incident;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;
import org.apache.flink.util.Collector;
import org.junit.jupiter.api.Test;

class CountRuleTest {
  private static final RuleSet RULES = RuleSet.load(Map.of());
  private static final long MIN = 60_000;

  private static Incident incident(
      String id, String cls, String host, long gpu, long t, boolean root) {
    Instant at = Instant.ofEpochMilli(t);
    return new Incident(
        1,
        id,
        cls,
        root,
        root ? null : "r",
        1,
        "error",
        "application",
        "s",
        Map.of("gpu", gpu),
        "s",
        "e",
        List.of(),
        host,
        "job-1",
        "/l",
        1,
        "rec-" + id,
        at,
        at,
        List.of(),
        null);
  }

  private static List<RuleEvent> match(Incident i) {
    List<RuleEvent> out = new ArrayList<>();
    new MatchRules(RULES)
        .flatMap(
            i,
            new Collector<>() {
              @Override
              public void collect(RuleEvent e) {
                out.add(e);
              }

              @Override
              public void close() {}
            });
    return out;
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
            match(incident("a" + i, "illegal_memory_access", "node-1", 2, t0 + i * MIN, true))) {
          h.processElement(e, e.eventTime());
        }
      }
      // another GPU and a consequence do not count toward node-1 GPU 2
      for (RuleEvent e : match(incident("b", "illegal_memory_access", "node-1", 3, t0, true))) {
        h.processElement(e, e.eventTime());
      }
      assertTrue(match(incident("c", "illegal_memory_access", "node-1", 2, t0, false)).isEmpty());
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
          match(incident("a1", "illegal_memory_access", "node-1", 2, t0 + MIN, true))) {
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

      h.processWatermark(new Watermark(t0 + 30 * MIN));
      assertEquals(0, h.numEventTimeTimers(), "no timers left");
      assertEquals(0, h.numKeyedStateEntries(), "no state left");
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
