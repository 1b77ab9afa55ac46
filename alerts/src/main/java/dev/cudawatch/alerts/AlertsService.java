package dev.cudawatch.alerts;

import dev.cudawatch.alerts.consume.TopicConsumer;
import dev.cudawatch.alerts.handoff.NodeConditionWriter;
import dev.cudawatch.alerts.handoff.PodEventWriter;
import dev.cudawatch.alerts.http.ApiServer;
import dev.cudawatch.alerts.http.Health;
import dev.cudawatch.alerts.http.IncidentPages;
import dev.cudawatch.alerts.metrics.AlertsMetrics;
import dev.cudawatch.alerts.metrics.HealthMetrics;
import dev.cudawatch.alerts.notify.Notifier;
import dev.cudawatch.alerts.store.AlertStore;
import dev.cudawatch.alerts.store.GpuHealthStore;
import dev.cudawatch.alerts.store.IncidentStore;
import dev.cudawatch.alerts.store.JobFailureStore;
import dev.cudawatch.common.http.WebConfig;
import dev.cudawatch.common.lifecycle.Uninterruptibly;
import dev.cudawatch.common.wire.Action;
import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.WireJson;
import java.io.IOException;
import java.io.PrintStream;
import java.time.Clock;
import java.time.Duration;

/**
 * The alerts service: consumes incidents, alerts, the GPU health ledger's recommendations and
 * failed jobs (their culprit rank), serves metrics, the API and the incident page, prints alerts,
 * and (when enabled) hands recommendations to Kubernetes as node conditions.
 */
public final class AlertsService implements AutoCloseable {
  private final AlertsSettings settings;
  private final AlertsMetrics metrics;
  private final HealthMetrics fleetHealth;
  private final IncidentStore incidents;
  private final AlertStore alerts;
  private final GpuHealthStore gpus;
  private final JobFailureStore jobFailures;
  private final Health health;
  private final AlertPrinter printer;
  private final Clock clock;
  private TopicConsumer consumer;
  private Thread consumerThread;
  private ApiServer http;
  private Notifier notifier;
  private NodeConditionWriter nodeConditions;
  private PodEventWriter podEvents;

  public AlertsService(AlertsSettings settings, Health health, PrintStream console, Clock clock) {
    this.settings = settings;
    this.metrics = new AlertsMetrics(settings.metricLimits());
    this.fleetHealth = new HealthMetrics(metrics.registry(), settings.maxSeriesPerMetric());
    this.incidents = new IncidentStore(settings.maxIncidents(), settings.maxIncidentsBytes());
    this.alerts = new AlertStore(settings.maxAlerts());
    this.gpus = new GpuHealthStore(settings.maxGpus());
    HealthMetrics.watch(metrics.registry(), gpus);
    this.jobFailures = new JobFailureStore(settings.maxJobFailures());
    HealthMetrics.watch(metrics.registry(), jobFailures);
    this.health = health;
    this.printer = console == null ? null : new AlertPrinter(console);
    this.clock = clock;
  }

  public void start() throws IOException {
    WireJson.warmUpInBackground(); // the first incident read needs Jackson's types ready
    http =
        ApiServer.builder()
            .host(settings.httpHost())
            .port(settings.httpPort())
            .registry(metrics.registry())
            .incidents(incidents)
            .alerts(alerts)
            .gpus(gpus)
            .health(health)
            .pages(new IncidentPages(incidents, gpus, jobFailures, metrics::lemonScore, clock))
            .web(WebConfig.load(settings.webConfigFile()))
            .build();
    if (settings.notifications().anyReceiver()) {
      notifier =
          new Notifier(settings.notifications(), metrics, clock, externalUrl(), incidents::get);
      notifier.start();
      Notifier n = notifier;
      health.register("notifier", () -> true, n::details);
    }
    if (settings.nodeConditions().enabled()) {
      nodeConditions =
          new NodeConditionWriter(
              settings.nodeConditions(), gpus, settings.maxGpus(), metrics.registry(), clock);
      nodeConditions.start();
    }
    if (settings.nodeConditions().podEvents()) {
      podEvents =
          new PodEventWriter(
              settings.nodeConditions(),
              externalUrl(),
              ExternalUrl.hostname(),
              metrics.registry(),
              clock);
      podEvents.start();
    }
    consumer =
        new TopicConsumer(
            settings.kafka(),
            settings.groupId(),
            metrics,
            this::onIncident,
            this::onAlert,
            this::onAction,
            jobFailures::add,
            this::afterBatch,
            clock);
    health.register("alerts-consumer", consumer::ready, consumer::details);
    consumerThread = new Thread(consumer, "cudawatch-alerts-consumer");
    consumerThread.setDaemon(true);
    consumerThread.start();
  }

  void onIncident(Incident i) {
    if (incidents.add(i)) {
      metrics.incident(i, clock.instant());
      fleetHealth.incident(i);
      if (podEvents != null) {
        podEvents.onIncident(i);
      }
    }
  }

  void onAlert(Alert a) {
    Alert prev = alerts.put(a);
    fleetHealth.alert(a);
    if (notifier != null) {
      notifier.onAlert(a);
    }
    metrics.alerts(alerts.active(clock.instant()));
    if (printer != null && (prev == null || prev.state() != a.state())) {
      printer.print(a);
    }
  }

  void onAction(Action a) {
    if (gpus.add(a) && nodeConditions != null) {
      nodeConditions.onAction(a);
    }
  }

  /**
   * After each batch from Kafka and before its offsets are committed, the notifier saves what it
   * must still send, so a crash cannot lose a notification the consumer already moved past.
   */
  void afterBatch() {
    if (notifier != null) {
      notifier.persist();
    }
  }

  /** The address people reach this service at: the base of every link it sends. */
  public String externalUrl() {
    return ExternalUrl.of(settings.notifications().externalUrl(), settings.httpHost(), http.port());
  }

  public int httpPort() {
    return http.port();
  }

  /** The consumer's state (for tests and /healthz). */
  public TopicConsumer consumer() {
    return consumer;
  }

  public IncidentStore incidents() {
    return incidents;
  }

  public GpuHealthStore gpus() {
    return gpus;
  }

  public JobFailureStore jobFailures() {
    return jobFailures;
  }

  @Override
  public void close() {
    if (consumer != null) {
      consumer.close();
      Uninterruptibly.join(consumerThread, Duration.ofSeconds(10));
    }
    if (http != null) {
      http.close();
    }
    if (notifier != null) {
      notifier.close();
    }
    if (nodeConditions != null) {
      nodeConditions.close();
    }
    if (podEvents != null) {
      podEvents.close();
    }
  }
}
