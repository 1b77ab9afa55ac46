package dev.cudawatch.alerts.metrics;

import dev.cudawatch.common.cli.BuildInfo;
import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.diagnosis.taxonomy.Taxonomy;
import dev.cudawatch.diagnosis.trend.TrendIncidents;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.core.metrics.Info;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
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
  private final Counter notificationsSent;
  private final Counter notificationFailures;
  private final Counter notificationsDropped;
  private final Gauge outbox;
  private final Gauge outboxBytes;
  private final Counter errors;
  private final Gauge lemonScore;
  private final Gauge secondsToFull;
  private final Gauge growth;
  private final Gauge memoryUsed;
  private final Gauge warnedAt;
  private final Gauge lag;

  /** The memory trend detector's classes: their incidents carry a leak's figures. */
  private static final Set<String> TREND_CLASSES =
      Taxonomy.builtIn().classesOf(TrendIncidents.DETECTOR);

  private final LemonScores lemons;
  private final SeriesLimiter gpuSeries;

  public AlertsMetrics(MetricLimits s) {
    // the JVM's and the process's own series (jvm_*, process_*), as every Java exporter has
    JvmMetrics.builder().register(registry);
    // which build this is, as Prometheus' own prometheus_build_info
    Info.builder()
        .name("cudawatch_build_info")
        .help("The build: version and git commit (value 1)")
        .labelNames("version", "revision")
        .register(registry)
        .addLabelValues(BuildInfo.current().version(), BuildInfo.current().revision());
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
      // not "job": Prometheus' own target label, which would rename ours to exported_job
      labels.add("training_job");
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
    notificationsSent =
        Counter.builder()
            .name("cudawatch_notifications_sent_total")
            .help("Notifications a receiver accepted")
            .labelNames("receiver")
            .register(registry);
    notificationFailures =
        Counter.builder()
            .name("cudawatch_notification_failures_total")
            .help("Delivery attempts that failed and will be retried")
            .labelNames("receiver")
            .register(registry);
    notificationsDropped =
        Counter.builder()
            .name("cudawatch_notifications_dropped_total")
            .help(
                "Notifications given up: rejected by the receiver (rejected), the outbox full"
                    + " (outbox_full), past their maximum age (max_age, dead-lettered), or stale"
                    + " resends whose endsAt had passed (stale)")
            .labelNames("receiver", "reason")
            .register(registry);
    outbox =
        Gauge.builder()
            .name("cudawatch_notification_outbox_entries")
            .help("Notifications waiting for delivery")
            .labelNames("receiver")
            .register(registry);
    outboxBytes =
        Gauge.builder()
            .name("cudawatch_notification_outbox_bytes")
            .unit(Unit.BYTES)
            .help("Bytes of notifications waiting for delivery (bounded by outbox_max_bytes)")
            .labelNames("receiver")
            .register(registry);
    errors =
        Counter.builder()
            .name("cudawatch_alerts_errors_total")
            .help(
                "Failures caught and retried (a full disk, a broker outage, a bug), by component;"
                    + " the component keeps running")
            .labelNames("component")
            .register(registry);
    List<String> gpuLabels = hostLabel ? List.of("host", "gpu") : List.of("gpu");
    lemonScore =
        Gauge.builder()
            .name("cudawatch_gpu_lemon_score")
            .help(
                "Different jobs that failed on this GPU in the last 24 hours (2 or more: suspect it)")
            .labelNames(gpuLabels.toArray(new String[0]))
            .register(registry);
    secondsToFull =
        Gauge.builder()
            .name("cudawatch_gpu_memory_time_to_full_seconds")
            .unit(Unit.SECONDS)
            .help("Predicted time until the GPU's memory is full, from its latest leak warning")
            .labelNames(gpuLabels.toArray(new String[0]))
            .register(registry);
    growth =
        Gauge.builder()
            .name("cudawatch_gpu_memory_growth_bytes_per_second")
            .help("GPU memory growth rate (Theil-Sen slope) at the latest leak warning")
            .labelNames(gpuLabels.toArray(new String[0]))
            .register(registry);
    memoryUsed =
        Gauge.builder()
            .name("cudawatch_gpu_memory_used_bytes")
            .unit(Unit.BYTES)
            .help("GPU memory in use at the latest leak warning")
            .labelNames(gpuLabels.toArray(new String[0]))
            .register(registry);
    warnedAt =
        Gauge.builder()
            .name("cudawatch_gpu_memory_warning_timestamp_seconds")
            .unit(Unit.SECONDS)
            .help("When the GPU's latest leak warning was measured (Unix time)")
            .labelNames(gpuLabels.toArray(new String[0]))
            .register(registry);
    lag =
        Gauge.builder()
            .name("cudawatch_consumer_lag_records")
            .help("Records in the topic not yet read by the alerts service")
            .labelNames("topic")
            .register(registry);
    lemons = new LemonScores(s.maxSeriesPerMetric());
    boolean[] gpuCappable = new boolean[gpuLabels.size()];
    java.util.Arrays.fill(gpuCappable, true);
    gpuSeries =
        new SeriesLimiter(
            s.maxSeriesPerMetric(), gpuCappable, v -> capped.labelValues("gpu_series").inc());
  }

  public void notificationSent(String receiver) {
    notificationsSent.labelValues(receiver).inc();
  }

  public void notificationFailed(String receiver) {
    notificationFailures.labelValues(receiver).inc();
  }

  public void notificationDropped(String receiver, String reason) {
    notificationsDropped.labelValues(receiver, reason).inc();
  }

  public void outboxSize(String receiver, int n, long bytes) {
    outbox.labelValues(receiver).set(n);
    outboxBytes.labelValues(receiver).set(bytes);
  }

  /** A failure that {@code component} caught and will retry. */
  public void error(String component) {
    errors.labelValues(component).inc();
  }

  public void consumerLag(String topic, long records) {
    lag.labelValues(topic).set(records);
  }

  /** Per-GPU gauges from an incident: the lemon score, and a leak warning's figures. */
  private void gpu(Incident i, java.time.Instant now) {
    Object gpu = i.fields().get("gpu");
    if (gpu == null || i.host() == null || !i.root()) {
      return;
    }
    String[] labels =
        gpuSeries.admit(
            hostLabel ? new String[] {i.host(), gpu.toString()} : new String[] {gpu.toString()});
    if (TREND_CLASSES.contains(i.incidentClass())) {
      setIfNumber(secondsToFull, labels, i.fields().get("predicted_seconds_to_full"));
      setIfNumber(growth, labels, i.fields().get("growth_bytes_per_second"));
      setIfNumber(memoryUsed, labels, i.fields().get("memory_used_bytes"));
      java.time.Instant at = i.eventTime() != null ? i.eventTime() : i.detectedTime();
      warnedAt.labelValues(labels).set(at.toEpochMilli() / 1000.0);
    } else if (LemonScores.COUNTED.contains(i.incidentClass())
        && (i.job() != null || i.source() != null)) {
      // without job metadata (plain file tailing) each log file stands for a job
      String job = i.job() != null ? i.job() : "file:" + i.source();
      for (var e : lemons.failed(String.join("|", labels), labels, job, now).entrySet()) {
        if (e.getValue() == 0) {
          lemonScore.remove(e.getKey());
        } else {
          lemonScore.labelValues(e.getKey()).set(e.getValue());
        }
      }
    }
  }

  /**
   * The lemon score of a GPU as {@code cudawatch_gpu_lemon_score} shows it (for the incident page);
   * 0 when no counted failure is known for it.
   */
  public int lemonScore(String host, String gpu, java.time.Instant now) {
    if (gpu == null || host == null) {
      return 0;
    }
    return lemons.score(hostLabel ? host + "|" + gpu : gpu, now);
  }

  private static void setIfNumber(Gauge g, String[] labels, Object v) {
    if (v instanceof Number n) {
      g.labelValues(labels).set(n.doubleValue());
    }
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
    gpu(i, now);
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
