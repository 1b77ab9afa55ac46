package dev.cudawatch.alerts.notify;

import com.fasterxml.jackson.core.type.TypeReference;
import dev.cudawatch.alerts.metrics.AlertsMetrics;
import dev.cudawatch.common.io.AtomicFiles;
import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.WireJson;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Sends alerts to the configured receivers: Alertmanager (API v2, every change at once and all
 * firing alerts again each resend interval), a webhook and Slack (grouped like an Alertmanager
 * route). What is due goes to the durable {@link Outbox}; one {@link Deliverer} per receiver drains
 * it. The grouping state is saved beside the outbox, so a restart neither loses a pending message
 * nor repeats more than at-least-once delivery allows.
 */
public final class Notifier implements AutoCloseable {
  static final String ALERTMANAGER = "alertmanager";
  static final String WEBHOOK = "webhook";
  static final String SLACK = "slack";

  /** Alerts per Alertmanager request. */
  static final int AM_BATCH = 500;

  private static final TypeReference<Map<String, Map<String, Grouper.Group>>> STATE =
      new TypeReference<>() {};

  private final NotifySettings settings;
  private final AlertsMetrics metrics;
  private final Clock clock;
  private final Outbox outbox;
  private final Path stateFile;
  private final Map<String, Grouper> groupers = new LinkedHashMap<>();
  private final Map<String, URI> urls = new LinkedHashMap<>();
  private final List<Deliverer> deliverers = new ArrayList<>();
  private final List<Thread> threads = new ArrayList<>();
  private ScheduledExecutorService ticker;
  private boolean dirty;

  public Notifier(NotifySettings s, AlertsMetrics metrics, Clock clock) {
    this.settings = s;
    this.metrics = metrics;
    this.clock = clock;
    Path dir = Path.of(s.stateDir());
    this.outbox =
        new Outbox(dir.resolve("outbox"), s.outboxMaxEntries(), metrics::notificationDropped);
    this.stateFile = dir.resolve("notifier.json");
    Map<String, Map<String, Grouper.Group>> saved = load();
    if (s.alertmanagerUrl() != null) {
      // Alertmanager groups by itself: one group, sent at once, resent each resend interval
      add(
          ALERTMANAGER,
          URI.create(s.alertmanagerUrl().replaceAll("/+$", "") + "/api/v2/alerts"),
          new Grouper(
              List.of(),
              0,
              0,
              s.resendIntervalMs(),
              1,
              saved.getOrDefault(ALERTMANAGER, Map.of())));
    }
    if (s.webhookUrl() != null) {
      add(WEBHOOK, URI.create(s.webhookUrl()), routeGrouper(saved.getOrDefault(WEBHOOK, Map.of())));
    }
    if (s.slackWebhookUrl() != null) {
      add(
          SLACK,
          URI.create(s.slackWebhookUrl()),
          routeGrouper(saved.getOrDefault(SLACK, Map.of())));
    }
  }

  private Grouper routeGrouper(Map<String, Grouper.Group> saved) {
    return new Grouper(
        settings.groupBy(),
        settings.groupWaitMs(),
        settings.groupIntervalMs(),
        settings.repeatIntervalMs(),
        1000,
        saved);
  }

  private void add(String name, URI url, Grouper g) {
    groupers.put(name, g);
    urls.put(name, url);
  }

  /** Starts delivery and the clock that sends what is due. */
  public void start() {
    HttpClient http =
        HttpClient.newBuilder().connectTimeout(Duration.ofMillis(settings.timeoutMs())).build();
    for (var e : urls.entrySet()) {
      Deliverer d = new Deliverer(e.getKey(), e.getValue(), outbox, http, settings, metrics);
      Thread t = new Thread(d, "cudawatch-notify-" + e.getKey());
      t.setDaemon(true);
      t.start();
      deliverers.add(d);
      threads.add(t);
    }
    ticker =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "cudawatch-notify-clock");
              t.setDaemon(true);
              return t;
            });
    ticker.scheduleWithFixedDelay(this::tickAndSave, 100, 100, TimeUnit.MILLISECONDS);
  }

  private void tickAndSave() {
    tick();
    persist();
  }

  /** Notes an alert for every receiver. */
  public synchronized void onAlert(Alert a) {
    long now = clock.millis();
    for (Grouper g : groupers.values()) {
      dirty |= g.offer(a, now);
    }
  }

  /** Puts what is due now into the outbox. */
  public synchronized void tick() {
    long now = clock.millis();
    String generator = settings.externalUrl() + "/api/alerts";
    for (var e : groupers.entrySet()) {
      List<Grouper.Batch> due = e.getValue().due(now);
      if (due.isEmpty()) {
        continue;
      }
      dirty = true;
      for (Grouper.Batch b : due) {
        switch (e.getKey()) {
          case ALERTMANAGER -> {
            var endsAt = clock.instant().plusMillis(4 * settings.resendIntervalMs());
            for (int i = 0; i < b.alerts().size(); i += AM_BATCH) {
              outbox.add(
                  ALERTMANAGER,
                  Payloads.alertmanager(
                      b.alerts().subList(i, Math.min(b.alerts().size(), i + AM_BATCH)),
                      endsAt,
                      generator));
            }
          }
          case WEBHOOK ->
              outbox.add(
                  WEBHOOK,
                  Payloads.webhook(
                      "cudawatch-webhook",
                      b,
                      settings.maxAlertsPerMessage(),
                      settings.externalUrl(),
                      generator));
          case SLACK ->
              outbox.add(
                  SLACK, Payloads.slack(b, settings.maxAlertsPerMessage(), settings.externalUrl()));
          default -> throw new IllegalStateException(e.getKey());
        }
      }
    }
  }

  /** Saves the grouping state if it changed (temp file, sync, rename). */
  public synchronized void persist() {
    if (!dirty) {
      return;
    }
    Map<String, Map<String, Grouper.Group>> state = new LinkedHashMap<>();
    groupers.forEach((k, g) -> state.put(k, g.state()));
    try {
      AtomicFiles.write(stateFile, WireJson.mapper().writeValueAsBytes(state));
      dirty = false;
    } catch (IOException e) {
      throw new UncheckedIOException("notifier state: " + e.getMessage(), e);
    }
  }

  private Map<String, Map<String, Grouper.Group>> load() {
    if (!Files.exists(stateFile)) {
      return Map.of();
    }
    try {
      return WireJson.mapper().readValue(Files.readAllBytes(stateFile), STATE);
    } catch (IOException e) {
      throw new UncheckedIOException(
          "notifier state " + stateFile + " is unreadable (" + e.getMessage() + ")", e);
    }
  }

  /** Receivers configured, by name. */
  public List<String> receivers() {
    return List.copyOf(urls.keySet());
  }

  Outbox outbox() {
    return outbox;
  }

  @Override
  public void close() throws InterruptedException {
    if (ticker != null) {
      ticker.shutdownNow();
      ticker.awaitTermination(5, TimeUnit.SECONDS);
    }
    for (Deliverer d : deliverers) {
      d.stop();
    }
    for (Thread t : threads) {
      t.interrupt();
      t.join(5_000);
    }
    persist();
  }
}
