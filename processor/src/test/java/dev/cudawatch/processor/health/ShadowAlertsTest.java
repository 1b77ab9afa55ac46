package dev.cudawatch.processor.health;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.cudawatch.common.wire.Action;
import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.WireJson;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.apache.flink.streaming.api.operators.ProcessOperator;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;

/** A rule in shadow mode records what it would have alerted; the others alert as before. */
class ShadowAlertsTest {
  private static Alert alert(String name) {
    Map<String, String> labels = Map.of("alertname", name, "host", "node-a", "gpu", "3");
    return new Alert(
        WireJson.VERSION,
        Alert.fingerprintOf(labels),
        Alert.State.FIRING,
        labels,
        Map.of("summary", name + " on node-a GPU 3"),
        Instant.parse("2026-11-22T03:00:00Z"),
        null);
  }

  @Test
  void shadowedRulesAreRecordedNotSent() throws Exception {
    HealthSettings s =
        HealthSettings.builder().shadow(List.of("SlowRank", "GpuRepairLadder")).build();
    try (var h =
        new OneInputStreamOperatorTestHarness<>(new ProcessOperator<>(new ShadowAlerts(s)))) {
      h.open();
      h.processElement(alert("SlowRank"), 0);
      h.processElement(alert("LemonGpu"), 0);
      h.processElement(alert("GpuRepairLadder"), 0);
      assertEquals(
          List.of("LemonGpu"),
          h.extractOutputValues().stream().map(a -> a.labels().get("alertname")).toList());
      List<Action> shadow =
          h.getSideOutput(ShadowAlerts.SHADOWED).stream().map(r -> r.getValue()).toList();
      assertEquals(
          List.of("SlowRank", "GpuRepairLadder"), shadow.stream().map(Action::action).toList());
      assertEquals(Action.SHADOW_ALERT, shadow.get(0).kind());
      assertEquals("3", shadow.get(0).gpu());
      assertEquals("would have fired: SlowRank on node-a GPU 3", shadow.get(0).reason());
    }
  }
}
