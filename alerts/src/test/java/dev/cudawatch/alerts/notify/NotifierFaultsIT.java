package dev.cudawatch.alerts.notify;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import dev.cudawatch.alerts.AlertsSettings;
import dev.cudawatch.alerts.metrics.AlertsMetrics;
import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.testkit.Await;
import dev.cudawatch.testkit.Tmpfs;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The notifier against real faults under its state directory (a real tmpfs: filled to the last
 * byte, remounted read-only) and a receiver that fails for good.
 */
class NotifierFaultsIT {
  @TempDir Path dir;
  private HttpServer server;
  private final List<String> bodies = new CopyOnWriteArrayList<>();

  /** A receiver at /hook answering 503 to bodies matching {@code broken}, 200 otherwise. */
  private String receiver(Predicate<String> broken, CountDownLatch hold) throws Exception {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext(
        "/hook",
        ex -> {
          String body = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
          try {
            if (hold != null && body.contains("node-held")) {
              hold.await(30, TimeUnit.SECONDS);
            }
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          int code = broken.test(body) ? 503 : 200;
          if (code == 200) {
            bodies.add(body);
          }
          ex.sendResponseHeaders(code, -1);
          ex.close();
        });
    server.setExecutor(java.util.concurrent.Executors.newCachedThreadPool());
    server.start();
    return "http://127.0.0.1:" + server.getAddress().getPort() + "/hook";
  }

  @AfterEach
  void stop() {
    if (server != null) {
      server.stop(0);
    }
  }

  private static NotifySettings settings(String webhook, Path state, Long maxAgeMs) {
    return NotifySettings.builder()
        .webhookUrl(webhook)
        .stateDir(state.toString())
        .groupBy(List.of("alertname", "host"))
        .groupWaitMs(0L)
        .groupIntervalMs(0L)
        .retryInitialMs(10L)
        .retryMaxMs(200L)
        .timeoutMs(1000L)
        .maxAgeMs(maxAgeMs)
        .build();
  }

  private static double metric(AlertsMetrics m, String series) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try {
      PrometheusTextFormatWriter.builder()
          .setIncludeCreatedTimestamps(false)
          .build()
          .write(out, m.registry().scrape());
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    Matcher x =
        Pattern.compile("(?m)^" + Pattern.quote(series) + " ([0-9.eE+-]+)$")
            .matcher(out.toString(StandardCharsets.UTF_8));
    return x.find() ? Double.parseDouble(x.group(1)) : 0;
  }

  private long delivered(String host) {
    return bodies.stream().filter(b -> b.contains("\"host\":\"" + host + "\"")).count();
  }

  @Test
  void aFullDiskStopsNoTickAndLosesNoBatch() throws Exception {
    String url = receiver(b -> false, null);
    Path state = dir.resolve("state");
    AlertsMetrics metrics = new AlertsMetrics(AlertsSettings.defaults().metricLimits());
    try (Tmpfs disk = Tmpfs.mount(state, "1m");
        Notifier n = new Notifier(settings(url, state, null), metrics, Clock.systemUTC())) {
      n.start();
      disk.fill();
      n.onAlert(GrouperTest.alert("X", "node-1", Alert.State.FIRING));
      Await.until(
          "ticks failing on the full disk, counted",
          () -> metric(metrics, "cudawatch_alerts_errors_total{component=\"notifier_tick\"}") >= 5,
          Duration.ofSeconds(30));
      assertEquals("failing", n.details().get("state"));
      assertEquals(0, delivered("node-1"), "not sent: it could not be queued");
      disk.free();
      Await.until("the batch delivered", () -> delivered("node-1") == 1, Duration.ofSeconds(30));
      Await.until(
          "ticks ok again", () -> "ok".equals(n.details().get("state")), Duration.ofSeconds(30));
      // the clock still runs: a later alert goes out too
      n.onAlert(GrouperTest.alert("X", "node-2", Alert.State.FIRING));
      Await.until(
          "a later alert delivered", () -> delivered("node-2") == 1, Duration.ofSeconds(30));
      assertEquals(1, delivered("node-1"), "once");
    }
  }

  @Test
  void aDelivererHitByAnIoErrorKeepsDelivering() throws Exception {
    CountDownLatch hold = new CountDownLatch(1);
    String url = receiver(b -> false, hold);
    Path state = dir.resolve("state");
    AlertsMetrics metrics = new AlertsMetrics(AlertsSettings.defaults().metricLimits());
    try (Tmpfs disk = Tmpfs.mount(state, "1m");
        Notifier n = new Notifier(settings(url, state, null), metrics, Clock.systemUTC())) {
      n.start();
      n.onAlert(GrouperTest.alert("X", "node-held", Alert.State.FIRING));
      Await.until(
          "the delivery in flight",
          () -> n.outbox().size(Notifier.WEBHOOK) == 1 && !server.getAddress().isUnresolved(),
          Duration.ofSeconds(30));
      disk.readOnly(true); // the delivered file cannot be removed: an exception in the deliverer
      hold.countDown();
      Await.until(
          "the deliverer's failure counted",
          () -> metric(metrics, "cudawatch_alerts_errors_total{component=\"deliverer\"}") >= 1,
          Duration.ofSeconds(30));
      disk.readOnly(false);
      Await.until(
          "the outbox drained",
          () -> n.outbox().size(Notifier.WEBHOOK) == 0,
          Duration.ofSeconds(30));
      n.onAlert(GrouperTest.alert("X", "node-after", Alert.State.FIRING));
      Await.until(
          "the same deliverer thread delivers the next one",
          () -> delivered("node-after") == 1,
          Duration.ofSeconds(30));
      assertTrue(delivered("node-held") >= 1, "delivered (again after the error: at least once)");
    }
  }

  @Test
  void aReceiverFailingForGoodDeadLettersAfterMaxAgeAndFreesTheQueue() throws Exception {
    String url = receiver(b -> b.contains("node-bad"), null);
    Path state = dir.resolve("state");
    AlertsMetrics metrics = new AlertsMetrics(AlertsSettings.defaults().metricLimits());
    try (Notifier n = new Notifier(settings(url, state, 1500L), metrics, Clock.systemUTC())) {
      n.start();
      n.onAlert(GrouperTest.alert("X", "node-bad", Alert.State.FIRING));
      Await.until(
          "the failing notification dead-lettered at its maximum age",
          () ->
              metric(
                      metrics,
                      "cudawatch_notifications_dropped_total{reason=\"max_age\",receiver=\"webhook\"}")
                  == 1.0,
          Duration.ofSeconds(30));
      n.onAlert(GrouperTest.alert("X", "node-good", Alert.State.FIRING));
      Await.until(
          "the next notification delivered: the queue is free again",
          () -> delivered("node-good") == 1,
          Duration.ofSeconds(30));
      try (var dead = Files.list(state.resolve("dead-letter").resolve(Notifier.WEBHOOK))) {
        assertTrue(
            Files.readString(dead.findFirst().orElseThrow()).contains("node-bad"),
            "the given-up payload is kept");
      }
      assertTrue(
          metric(metrics, "cudawatch_notification_failures_total{receiver=\"webhook\"}") >= 2,
          "it was retried until its maximum age");
    }
  }

  @Test
  void anAlertmanagerBackAfterAnOutageGetsNoStaleResends() throws Exception {
    java.util.concurrent.atomic.AtomicBoolean up = new java.util.concurrent.atomic.AtomicBoolean();
    List<String> late = new CopyOnWriteArrayList<>();
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext(
        "/api/v2/alerts",
        ex -> {
          String body = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
          java.time.Instant now = java.time.Instant.now();
          if (up.get()) {
            for (var a : dev.cudawatch.common.wire.WireJson.mapper().readTree(body)) {
              // already over when it arrived (200 ms allowed for the trip from the last check)
              if (java.time.Instant.parse(a.path("endsAt").asText())
                  .isBefore(now.minusMillis(200))) {
                late.add(body);
              }
            }
            bodies.add(body);
          }
          ex.sendResponseHeaders(up.get() ? 200 : 503, -1);
          ex.close();
        });
    server.start();
    NotifySettings am =
        NotifySettings.builder()
            .alertmanagerUrl("http://127.0.0.1:" + server.getAddress().getPort())
            .stateDir(dir.resolve("state").toString())
            .resendIntervalMs(100L)
            .retryInitialMs( // resend every 100 ms: each push ends 400 ms ahead
                50L)
            .retryMaxMs(1000L)
            .timeoutMs( // retries back off to 1 s: pushes go stale while queued
                1000L)
            .build();
    AlertsMetrics metrics = new AlertsMetrics(AlertsSettings.defaults().metricLimits());
    try (Notifier n = new Notifier(am, metrics, Clock.systemUTC())) {
      n.start();
      n.onAlert(GrouperTest.alert("X", "node-1", Alert.State.FIRING));
      Await.until(
          "queued pushes dropped as stale while Alertmanager is down",
          () ->
              metric(
                      metrics,
                      "cudawatch_notifications_dropped_total{reason=\"stale\",receiver=\"alertmanager\"}")
                  >= 3,
          Duration.ofSeconds(60));
      up.set(true);
      Await.until("pushes accepted again", () -> bodies.size() >= 3, Duration.ofSeconds(30));
    }
    assertEquals(List.of(), late, "nothing already over was pushed");
  }
}
