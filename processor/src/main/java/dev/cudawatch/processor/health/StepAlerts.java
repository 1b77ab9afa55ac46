package dev.cudawatch.processor.health;

import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.WireJson;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.flink.api.common.functions.FlatMapFunction;
import org.apache.flink.util.Collector;

/**
 * A {@code SlowRank} alert per slow rank (labelled by job, rank, host and GPU) and a {@code
 * JobSlowdown} alert per slowed job: warnings, news for an hour like an incident's alert.
 */
public final class StepAlerts implements FlatMapFunction<Incident, Alert> {
  private static final long serialVersionUID = 1L;

  public static final String SLOW_RANK = "SlowRank";
  public static final String JOB_SLOWDOWN = "JobSlowdown";

  @Override
  public void flatMap(Incident i, Collector<Alert> out) {
    boolean rank = StepIncidents.SLOW_RANK.equals(i.incidentClass());
    if (!rank && !StepIncidents.JOB_SLOWDOWN.equals(i.incidentClass())) {
      return;
    }
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put("alertname", rank ? SLOW_RANK : JOB_SLOWDOWN);
    labels.put("severity", i.severity());
    labels.put("job", i.job());
    if (rank) {
      labels.put("rank", String.valueOf(i.fields().get("rank")));
      labels.put("host", i.host() == null ? "unknown" : i.host());
      Object gpu = i.fields().get("gpu");
      labels.put("gpu", gpu == null ? "unknown" : gpu.toString());
    }
    Map<String, String> ann = new LinkedHashMap<>();
    ann.put("summary", i.summary());
    ann.put("description", i.explanation() == null ? "" : i.explanation());
    ann.put("next_steps", String.join("\n", i.nextSteps()));
    ann.put("value", String.valueOf(i.fields().get("slowdown_ratio")));
    ann.put("incident_id", i.id());
    Instant start = i.eventTime();
    out.collect(
        new Alert(
            WireJson.VERSION,
            Alert.fingerprintOf(labels),
            Alert.State.FIRING,
            labels,
            ann,
            start,
            start.plus(Duration.ofHours(1))));
  }
}
