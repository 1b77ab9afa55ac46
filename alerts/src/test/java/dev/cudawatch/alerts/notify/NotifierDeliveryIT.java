package dev.cudawatch.alerts.notify;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import dev.cudawatch.alerts.AlertsSettings;
import dev.cudawatch.alerts.metrics.AlertsMetrics;
import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.testkit.Await;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Notifications over real sockets to a receiver that fails, hangs, or rejects. */
class NotifierDeliveryIT {
  @TempDir Path dir;
  private HttpServer server;
  private final List<String> bodies = new CopyOnWriteArrayList<>();
  private final AtomicInteger requests = new AtomicInteger();

  /** A receiver at /hook/SECRET-TOKEN answering with {@code status.get()} for each request. */
  private String receiver(java.util.function.IntUnaryOperator status, CountDownLatch hold)
      throws Exception {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext(
        "/hook/SECRET-TOKEN",
        ex -> {
          int n = requests.incrementAndGet();
          String body = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
          try {
            if (hold != null && n == 1) {
              hold.await(30, TimeUnit.SECONDS); // hangs: the service is killed meanwhile
            }
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          int code = status.applyAsInt(n);
          if (code == 200) {
            bodies.add(body);
          }
          ex.sendResponseHeaders(code, -1);
          ex.close();
        });
    server.setExecutor(java.util.concurrent.Executors.newCachedThreadPool());
    server.start();
    return "http://127.0.0.1:" + server.getAddress().getPort() + "/hook/SECRET-TOKEN";
  }

  @AfterEach
  void stop() {
    if (server != null) {
      server.stop(0);
    }
  }

  private NotifySettings settings(String webhook) {
    return NotifySettings.builder()
        .webhookUrl(webhook)
        .stateDir(dir.resolve("state").toString())
        .groupWaitMs(0L)
        .groupIntervalMs(0L)
        .retryInitialMs(10L)
        .retryMaxMs(50L)
        .timeoutMs(1000L)
        .build();
  }

  private static String scrape(AlertsMetrics m) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try {
      PrometheusTextFormatWriter.builder()
          .setIncludeCreatedTimestamps(false)
          .build()
          .write(out, m.registry().scrape());
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    return out.toString(StandardCharsets.UTF_8);
  }

  private void await(java.util.function.BooleanSupplier done) {
    Await.until("the receiver's state", done, java.time.Duration.ofSeconds(30));
  }

  @Test
  void aReceiverFailingThreeTimesGetsTheNotificationOnTheFourthTry() throws Exception {
    String url = receiver(n -> n <= 3 ? 503 : 200, null);
    AlertsMetrics metrics = new AlertsMetrics(AlertsSettings.defaults().metricLimits());
    try (Notifier n = new Notifier(settings(url), metrics, Clock.systemUTC())) {
      n.start();
      n.onAlert(GrouperTest.alert("RepeatedIllegalMemoryAccess", "node-1", Alert.State.FIRING));
      // delivered once the deliverer saw the 200 and counted it
      await(
          () ->
              scrape(metrics)
                  .contains("cudawatch_notifications_sent_total{receiver=\"webhook\"} 1.0"));
    }
    assertEquals(1, bodies.size());
    assertEquals(4, requests.get());
    assertTrue(bodies.get(0).contains("\"version\":\"4\""), bodies.get(0));
    String text = scrape(metrics);
    assertTrue(
        text.contains("cudawatch_notification_failures_total{receiver=\"webhook\"} 3.0"), text);
    assertTrue(text.contains("cudawatch_notifications_sent_total{receiver=\"webhook\"} 1.0"), text);
    assertTrue(!text.contains("SECRET-TOKEN"), "no secret in metrics");
  }

  @Test
  void aRejectedNotificationIsDroppedAndCounted() throws Exception {
    String url = receiver(n -> 400, null);
    AlertsMetrics metrics = new AlertsMetrics(AlertsSettings.defaults().metricLimits());
    try (Notifier n = new Notifier(settings(url), metrics, Clock.systemUTC())) {
      n.start();
      n.onAlert(GrouperTest.alert("X", "node-1", Alert.State.FIRING));
      await(
          () ->
              scrape(metrics)
                  .contains(
                      "cudawatch_notifications_dropped_total{reason=\"rejected\",receiver=\"webhook\"} 1.0"));
      await(() -> n.outbox().size(Notifier.WEBHOOK) == 0);
    }
    assertEquals(1, requests.get(), "a 400 is not retried");
  }

  @Test
  void killedMidDeliveryTheRestartedServiceDeliversFromTheOutbox() throws Exception {
    CountDownLatch hold = new CountDownLatch(1);
    String url = receiver(n -> n == 1 ? 500 : 200, hold);
    Alert a = GrouperTest.alert("LemonGpu", "node-4", Alert.State.FIRING);
    Notifier first =
        new Notifier(
            settings(url),
            new AlertsMetrics(AlertsSettings.defaults().metricLimits()),
            Clock.systemUTC());
    first.start();
    first.onAlert(a);
    await(() -> requests.get() == 1); // the delivery is in flight, and hangs
    first.close(); // killed mid-delivery: its threads are interrupted
    hold.countDown();

    try (Notifier second =
        new Notifier(
            settings(url),
            new AlertsMetrics(AlertsSettings.defaults().metricLimits()),
            Clock.systemUTC())) {
      assertEquals(1, second.outbox().size(Notifier.WEBHOOK), "still in the outbox");
      second.start();
      await(() -> !bodies.isEmpty());
      await(() -> second.outbox().size(Notifier.WEBHOOK) == 0);
    }
    assertTrue(bodies.get(0).contains(a.fingerprint()), bodies.get(0));
    assertEquals(
        1, bodies.size(), "delivered once after the restart: the grouping state was saved");
  }
}
