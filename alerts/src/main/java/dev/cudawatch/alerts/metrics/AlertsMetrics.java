package dev.cudawatch.alerts.metrics;

import dev.cudawatch.alerts.AlertsSettings;
import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.Incident;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.Unit;
import java.time.Duration;
import java.util.List;
import java.util.Set;

/** The service's Prometheus metrics; label values pass through a {@link SeriesLimiter}. */
public final class AlertsMetrics {
  private final PrometheusRegistry registry = new PrometheusRegistry();
  private final boolean hostLabel;
  private final Set<String> allowedJobs;
  private final Counter incidents;
  private final Counter capped;
  private final Counter deadLetters;
  private final Counter consumed;
  private final Gauge activeAlerts;
  private final Histogram latency;
  private final SeriesLimiter incidentSeries;

  public AlertsMetrics(AlertsSettings s) {
    this.hostLabel = s.hostLabel();
    this.allowedJobs = Set.copyOf(s.allowedJobLabels());
    capped =
        Counter.builder()
            .name("cudawatch_metric_series_capped_total")
            .help("Label combinations folded into 'other' by the cardinality cap")
            .labelNames("metric")
            .register(registry);
    List<String> labels = new java.util.ArrayList<>(List.of("class", "severity", "suspect"));
    if (hostLabel) {
      labels.add("host");
    }
    if (!allowedJobs.isEmpty()) {
      labels.add("job");
    }
    incidents =
        Counter.builder()
            .name("cudawatch_incidents_total")
            .help("Incidents diagnosed, by taxonomy class")
            .labelNames(labels.toArray(new String[0]))
            .register(registry);
    boolean[] cappable = new boolean[labels.size()];
    for (int i = 3; i < cappable.length; i++) {
      cappable[i] = true;
    }
    incidentSeries =
        new SeriesLimiter(
            s.maxSeriesPerMetric(),
            cappable,
            v -> capped.labelValues("cudawatch_incidents_total").inc());
    deadLetters =
        Counter.builder()
            .name("cudawatch_dead_letters_total")
            .help("Records that could not be read, sent to the dead-letter topic")
            .labelNames("stage", "topic")
            .register(registry);
    consumed =
        Counter.builder()
            .name("cudawatch_records_consumed_total")
            .help("Records read from Kafka by the alerts service")
            .labelNames("topic")
            .register(registry);
    activeAlerts =
        Gauge.builder()
            .name("cudawatch_alerts_active")
            .help("Alerts firing now")
            .labelNames("alertname", "severity")
            .register(registry);
    latency =
        Histogram.builder()
            .name("cudawatch_incident_latency_seconds")
            .unit(Unit.SECONDS)
            .help(
                "From the first line of an incident being written to the incident reaching the alerts service")
            .classicUpperBounds(0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300)
            .register(registry);
  }

  public PrometheusRegistry registry() {
    return registry;
  }

  public void incident(Incident i, java.time.Instant now) {
    List<String> v =
        new java.util.ArrayList<>(List.of(i.incidentClass(), nz(i.severity()), nz(i.suspect())));
    if (hostLabel) {
      v.add(nz(i.host()));
    }
    if (!allowedJobs.isEmpty()) {
      v.add(i.job() != null && allowedJobs.contains(i.job()) ? i.job() : SeriesLimiter.OTHER);
    }
    incidents.labelValues(incidentSeries.admit(v.toArray(new String[0]))).inc();
    if (i.eventTime() != null) {
      double s = Duration.between(i.eventTime(), now).toMillis() / 1000.0;
      if (s >= 0) {
        latency.observe(s);
      }
    }
  }

  public void consumed(String topic) {
    consumed.labelValues(topic).inc();
  }

  public void deadLetter(String stage, String topic) {
    deadLetters.labelValues(stage, topic).inc();
  }

  /** Sets the firing-alert gauge from the current alerts. */
  public void alerts(List<Alert> firing) {
    activeAlerts.clear();
    for (Alert a : firing) {
      activeAlerts.labelValues(nz(a.alertName()), nz(a.labels().get("severity"))).inc();
    }
  }

  private static String nz(String s) {
    return s == null || s.isEmpty() ? "unknown" : s;
  }
}
