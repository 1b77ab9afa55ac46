package dev.cudawatch.processor.health;

import dev.cudawatch.common.wire.Action;
import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.processor.records.ActionCodec;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * Shadow mode: alerts of the rules listed under {@code health.shadow} do not go out; what they
 * would have alerted goes to {@code cudawatch.actions} as a {@code shadow_alert} and is counted
 * ({@code cudawatch_shadow_alerts} by rule), so a new or re-tuned rule can be watched before it
 * pages anyone. Every other alert passes unchanged.
 */
public final class ShadowAlerts extends ProcessFunction<Alert, Alert> {
  private static final long serialVersionUID = 1L;

  public static final OutputTag<Action> SHADOWED =
      new OutputTag<>("shadow-alerts", ActionCodec.TYPE);

  private final List<String> shadow;
  private transient Map<String, Counter> counters;

  public ShadowAlerts(HealthSettings s) {
    this.shadow = List.copyOf(s.shadow());
  }

  @Override
  public void open(OpenContext ctx) {
    counters = new HashMap<>();
  }

  @Override
  public void processElement(Alert a, Context ctx, Collector<Alert> out) {
    String rule = a.labels().get("alertname");
    if (rule == null || !shadow.contains(rule)) {
      out.collect(a);
      return;
    }
    counters
        .computeIfAbsent(
            rule,
            r ->
                getRuntimeContext()
                    .getMetricGroup()
                    .addGroup("rule", r)
                    .counter("cudawatch_shadow_alerts"))
        .inc();
    Map<String, String> l = a.labels();
    ctx.output(
        SHADOWED,
        new Action(
            WireJson.VERSION,
            "shadow:" + a.fingerprint() + ":" + a.state() + ":" + a.startsAt(),
            Action.SHADOW_ALERT,
            rule,
            "would have "
                + (a.state() == Alert.State.FIRING ? "fired" : "resolved")
                + ": "
                + a.annotations().getOrDefault("summary", rule),
            l.get("host"),
            l.get("gpu"),
            l.get("gpu_uuid"),
            l.getOrDefault("job", a.annotations().get("job")),
            null,
            a.annotations().get("incident_id"),
            0,
            0,
            0,
            null,
            a.startsAt(),
            l));
  }
}
