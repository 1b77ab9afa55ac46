package dev.cudawatch.alerts.notify;

import com.fasterxml.jackson.core.type.TypeReference;
import dev.cudawatch.alerts.metrics.AlertsMetrics;
import dev.cudawatch.common.http.DefaultPorts;
import dev.cudawatch.common.io.AtomicFiles;
import dev.cudawatch.common.lifecycle.Uninterruptibly;
import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.Incident;
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
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends alerts to the configured receivers: Alertmanager (API v2: each change at once, only the
 * alerts that changed, and every firing alert again each resend interval), a webhook and Slack
 * (grouped like an Alertmanager route). What is due goes to the durable {@link Outbox}, and only
 * once it is there is it marked sent; one {@link Deliverer} per receiver drains it. The grouping
 * state is saved beside the outbox, so a restart neither loses a pending message nor repeats more
 * than at-least-once delivery allows. A tick that fails (a full disk) is counted and the next tick
 * tries again: the clock never stops.
 */
public final class Notifier implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Notifier.class);
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
  private volatile java.time.Instant failingSince;
  private final AlertLinks links;

  /** Links to {@code external_url}, or the default local address, and to no held incidents. */
  public Notifier(NotifySettings s, AlertsMetrics metrics, Clock clock) {
    this(
        s,
        metrics,
        clock,
        s.externalUrl() == null ? DefaultPorts.ALERTS_LOCAL_URL : s.externalUrl(),
        id -> Optional.empty());
  }

  /**
   * @param externalUrl the service's address as people reach it (see {@code ExternalUrl})
   * @param incidents the incidents held, by id: an alert's next step and job, rank, host and GPU
   *     come from its incident when the alert itself does not carry them
   */
  public Notifier(
      NotifySettings s,
      AlertsMetrics metrics,
      Clock clock,
      String externalUrl,
      Function<String, Optional<Incident>> incidents) {
    this.links = new AlertLinks(externalUrl, s.runbookBaseUrl(), incidents);
    this.settings = s;
    this.metrics = metrics;
    this.clock = clock;
    Path dir = Path.of(s.stateDir());
    this.outbox =
        new Outbox(
            dir.resolve("outbox"),
            dir.resolve("dead-letter"),
            s.outboxMaxEntries(),
            s.outboxMaxBytes(),
            metrics::notificationDropped);
    this.stateFile = dir.resolve("notifier.json");
    Map<String, Map<String, Grouper.Group>> saved = load();
    if (s.alertmanagerUrl() != null) {
      // Alertmanager groups by itself: changes at once, all firing again each resend interval
      add(
          ALERTMANAGER,
          URI.create(s.alertmanagerUrl().replaceAll("/+$", "") + "/api/v2/alerts"),
          new Grouper(
              List.of(),
              0,
              0,
              s.resendIntervalMs(),
              1,
              saved.getOrDefault(ALERTMANAGER, Map.of()),
              true));
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
      Deliverer d = new Deliverer(e.getKey(), e.getValue(), outbox, http, settings, metrics, clock);
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

  /** The scheduled tick: whatever fails is counted and tried again at the next one. */
  private void tickAndSave() {
    try {
      tick();
      persist();
      if (failingSince != null) {
        LOG.info("notifier: ticks succeed again");
        failingSince = null;
      }
    } catch (RuntimeException e) {
      metrics.error("notifier_tick");
      if (failingSince == null) {
        failingSince = clock.instant();
        LOG.error("notifier: tick failed ({}); retrying every tick", e.getMessage());
      }
    }
  }

  /** Null while ticks succeed; else when they began to fail. */
  public java.time.Instant failingSince() {
    return failingSince;
  }

  /** The notifier's part of /healthz: whether ticks fail (a full disk), and each outbox. */
  public Map<String, Object> details() {
    Map<String, Object> d = new LinkedHashMap<>();
    java.time.Instant f = failingSince;
    d.put("state", f == null ? "ok" : "failing");
    if (f != null) {
      d.put("failing_since", f.toString());
    }
    Map<String, Object> queued = new LinkedHashMap<>();
    for (String r : urls.keySet()) {
      queued.put(r, Map.of("entries", outbox.size(r), "bytes", outbox.bytes(r)));
    }
    d.put("outbox", queued);
    return d;
  }

  /** Notes an alert for every receiver. */
  public synchronized void onAlert(Alert a) {
    long now = clock.millis();
    for (Grouper g : groupers.values()) {
      dirty |= g.offer(a, now);
    }
  }

  /**
   * Puts what is due now into the outbox; a batch is marked sent only once it is there, so a failed
   * write (a full disk) leaves it due for the next tick.
   */
  public synchronized void tick() {
    long now = clock.millis();
    for (var e : groupers.entrySet()) {
      Grouper g = e.getValue();
      for (Grouper.Batch b : g.pending(now)) {
        queue(e.getKey(), b, now);
        g.sent(b, now);
        dirty = true;
      }
    }
  }

  private void queue(String receiver, Grouper.Batch grouped, long now) {
    // links and the incident's facts are added as the message is made: by then the incident
    // (another topic) has most likely arrived, and a re-send to Alertmanager refreshes them
    Grouper.Batch b =
        new Grouper.Batch(
            grouped.groupLabels(),
            grouped.groupKey(),
            grouped.alerts().stream().map(links::enrich).toList(),
            grouped.full());
    switch (receiver) {
      case ALERTMANAGER -> {
        var endsAt = clock.instant().plusMillis(4 * settings.resendIntervalMs());
        for (int i = 0; i < b.alerts().size(); i += AM_BATCH) {
          List<Alert> part = b.alerts().subList(i, Math.min(b.alerts().size(), i + AM_BATCH));
          // stale once every alert in it has ended at Alertmanager, which then resolved them
          // itself (a resolution: once the longest end it may have been told has passed)
          long stale = 0;
          for (Alert a : part) {
            var end =
                a.state() == Alert.State.RESOLVED ? endsAt : Payloads.alertmanagerEnd(a, endsAt);
            stale = Math.max(stale, end.toEpochMilli());
          }
          outbox.add(ALERTMANAGER, Payloads.alertmanager(part, endsAt, links), now, stale);
        }
      }
      case WEBHOOK ->
          outbox.add(
              WEBHOOK,
              Payloads.webhook("cudawatch-webhook", b, settings.maxAlertsPerMessage(), links),
              now,
              0);
      case SLACK ->
          outbox.add(SLACK, Payloads.slack(b, settings.maxAlertsPerMessage(), links), now, 0);
      default -> throw new IllegalStateException(receiver);
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
  public void close() {
    if (ticker != null) {
      ticker.shutdownNow();
      Uninterruptibly.awaitTermination(ticker, Duration.ofSeconds(5));
    }
    for (Deliverer d : deliverers) {
      d.stop();
    }
    for (Thread t : threads) {
      t.interrupt();
      Uninterruptibly.join(t, Duration.ofSeconds(5));
    }
    try {
      tick(); // what is due now, then the state: a clean stop repeats nothing
      persist();
    } catch (RuntimeException e) {
      // a full disk: the consumer did not commit what this state would have covered, so the next
      // run reads those alerts again
      metrics.error("notifier_tick");
      LOG.warn("notifier: state not saved at close ({})", e.getMessage());
    }
  }
}
