package dev.cudawatch.alerts;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import dev.cudawatch.alerts.consume.TopicConsumer;
import dev.cudawatch.alerts.http.Health;
import dev.cudawatch.alerts.notify.NotifySettings;
import dev.cudawatch.common.Topics;
import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.kafka.embedded.KafkaBrokerExtension;
import dev.cudawatch.testkit.Await;
import dev.cudawatch.testkit.Tmpfs;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real faults against the whole alerts service: its broker goes away for 90 s (longer than every
 * client timeout), and the disk under its outbox and state (a real 1 MiB tmpfs) fills to the last
 * byte while alerts arrive. Afterwards a real webhook receiver on loopback must get every
 * notification exactly once, and a restarted service must not send any of them again.
 */
class AlertsFaultsIT {
  private static final Duration OUTAGE = Duration.ofSeconds(90);
  private static final int N = 10;

  @RegisterExtension
  static final KafkaBrokerExtension BROKER = new KafkaBrokerExtension(Topics.ALL, 2);

  @TempDir Path dir;
  private final HttpClient http = HttpClient.newHttpClient();

  /** (fingerprint, status) -> times the receiver got it. */
  private final Map<String, AtomicInteger> received = new ConcurrentHashMap<>();

  @Test
  void survivesABrokerOutageAndAFullDiskAndDeliversEveryNotificationOnce() throws Exception {
    HttpServer receiver = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    receiver.createContext(
        "/hook",
        ex -> {
          JsonNode body = WireJson.mapper().readTree(ex.getRequestBody().readAllBytes());
          for (JsonNode a : body.path("alerts")) {
            String key = a.path("fingerprint").asText() + ":" + a.path("status").asText();
            received.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
          }
          ex.sendResponseHeaders(200, -1);
          ex.close();
        });
    receiver.start();
    Path state = dir.resolve("state");
    try (Tmpfs disk = Tmpfs.mount(state, "1m")) {
      AlertsSettings s =
          AlertsSettings.builder()
              .kafka(new KafkaSettings(BROKER.bootstrapServers(), Map.of()))
              .httpPort(0)
              .notifications(
                  notifications(
                      "http://127.0.0.1:" + receiver.getAddress().getPort() + "/hook", state))
              .build();
      AlertsService svc = new AlertsService(s, new Health(), null, Clock.systemUTC());
      try {
        svc.start();
        String base = "http://127.0.0.1:" + svc.httpPort();

        // 1. N alerts fire and are delivered
        produce(0, N, Alert.State.FIRING);
        awaitReceived(N);

        // 2. the broker goes away for 90 s; meanwhile the disk under the outbox fills up
        BROKER.stop();
        long outageStart = System.nanoTime();
        long filled = disk.fill();
        assertEquals(0, disk.usableBytes(), "the tmpfs is full");
        Await.until(
            "the consumer to report the outage on /healthz",
            () -> consumerState(base),
            "retrying"::equals,
            Duration.ofSeconds(60));
        Await.until(
            OUTAGE.toSeconds() + " s of broker outage",
            () -> System.nanoTime() - outageStart >= OUTAGE.toNanos(),
            OUTAGE.plusSeconds(30));
        long outageSeconds = (System.nanoTime() - outageStart) / 1_000_000_000L;
        BROKER.restart(); // back, same address and data

        // 3. while the disk is still full: N alerts resolve and N new ones fire
        produce(0, N, Alert.State.RESOLVED);
        produce(N, 2 * N, Alert.State.FIRING);
        Await.until(
            "the consumer to read the new alerts after the outage",
            () -> metric(base, "cudawatch_records_consumed_total{topic=\"cudawatch.alerts\"}"),
            v -> v >= 3 * N,
            Duration.ofSeconds(120));
        Await.until(
            "notifier ticks failing on the full disk",
            () -> metric(base, "cudawatch_alerts_errors_total{component=\"notifier_tick\"}"),
            v -> v >= 3,
            Duration.ofSeconds(30));
        assertEquals(
            "failing", health(base).path("details").path("notifier").path("state").asText());
        assertEquals(N, total(), "nothing is sent that was not durably queued");
        double consumerErrors =
            metric(base, "cudawatch_alerts_errors_total{component=\"consumer\"}");

        // 4. space again: everything is delivered, once
        disk.free();
        long freed = System.nanoTime();
        awaitReceived(3 * N);
        long deliveredMs = (System.nanoTime() - freed) / 1_000_000;
        AlertsService first = svc;
        Await.until(
            "the outbox to drain and the consumer to commit, consuming again",
            () ->
                first.consumer().state() == TopicConsumer.State.CONSUMING
                    && health(base)
                        .path("details")
                        .path("notifier")
                        .path("state")
                        .asText()
                        .equals("ok")
                    && metric(base, "cudawatch_notification_outbox_entries{receiver=\"webhook\"}")
                        == 0
                    && health(base)
                            .path("details")
                            .path("alerts-consumer")
                            .path("uncommitted_records")
                            .asLong()
                        == 0,
            Boolean.TRUE::equals,
            Duration.ofSeconds(30));
        double tickErrors =
            metric(base, "cudawatch_alerts_errors_total{component=\"notifier_tick\"}");

        // 5. the disk fills again and the service stops before it could save what it read:
        // close() must not commit those records, so the next run reads them again
        disk.fill();
        produce(N, 2 * N, Alert.State.RESOLVED);
        Await.until(
            "the consumer to hold N handled records it cannot make durable",
            () ->
                health(base)
                    .path("details")
                    .path("alerts-consumer")
                    .path("uncommitted_records")
                    .asLong(),
            v -> v == N,
            Duration.ofSeconds(60));
        svc.close();
        disk.free();

        // 6. the next run reads from the committed offsets and the saved state: what the last
        // one could not save is sent once, nothing else again
        svc = new AlertsService(s, new Health(), null, Clock.systemUTC());
        svc.start();
        String base2 = "http://127.0.0.1:" + svc.httpPort();
        awaitReceived(4 * N);
        produce(2 * N, 2 * N + 1, Alert.State.FIRING); // a marker
        awaitReceived(4 * N + 1);
        assertEquals(
            N + 1.0,
            metric(base2, "cudawatch_records_consumed_total{topic=\"cudawatch.alerts\"}"),
            "the next run read the N records left uncommitted and the marker: no more, no less");
        Map<String, Integer> dupes = new TreeMap<>();
        received.forEach(
            (k, v) -> {
              if (v.get() != 1) {
                dupes.put(k, v.get());
              }
            });
        assertEquals(Map.of(), dupes, "every notification exactly once");
        assertEquals(4 * N + 1, received.size());
        System.out.printf(
            "FIGURES: outage %d s; tmpfs filled with %d bytes (0 usable); consumer failures"
                + " caught and retried (outage, then full disk) %.0f; notifier tick failures on the full disk %.0f;"
                + " %d notifications delivered %d ms after space returned; %d distinct"
                + " notifications received (%d after a stop on the full disk), duplicates %d%n",
            outageSeconds,
            filled,
            consumerErrors,
            tickErrors,
            2 * N,
            deliveredMs,
            received.size(),
            N,
            dupes.size());
      } finally {
        svc.close();
      }
    } finally {
      receiver.stop(0);
    }
  }

  private static NotifySettings notifications(String webhook, Path state) {
    return NotifySettings.builder()
        .webhookUrl(webhook)
        .stateDir(state.toString())
        .groupBy(List.of("alertname", "host"))
        .groupWaitMs( // one alert per message: each counted on its own
            0L)
        .groupIntervalMs(0L)
        .retryInitialMs(10L)
        .retryMaxMs(500L)
        .timeoutMs(2000L)
        .build();
  }

  /** Alerts for hosts {@code from} until {@code to}, in one state, committed to the topic. */
  private static void produce(int from, int to, Alert.State st) throws Exception {
    try (var p = BROKER.producer()) {
      List<java.util.concurrent.Future<?>> sent = new ArrayList<>();
      for (int i = from; i < to; i++) {
        sent.add(p.send(new ProducerRecord<>(Topics.ALERTS, WireJson.toBytes(alert(i, st)))));
      }
      for (var f : sent) {
        f.get();
      }
    }
  }

  static Alert alert(int host, Alert.State st) {
    Map<String, String> labels =
        Map.of("alertname", "GpuJobFailure", "host", "node-" + host, "severity", "error");
    Instant start = Instant.parse("2026-11-22T03:00:00Z");
    return new Alert(
        1,
        Alert.fingerprintOf(labels),
        st,
        labels,
        Map.of("summary", "job failed on node-" + host),
        start,
        st == Alert.State.RESOLVED ? start.plusSeconds(60) : null);
  }

  private int total() {
    return received.values().stream().mapToInt(AtomicInteger::get).sum();
  }

  private void awaitReceived(int n) {
    Await.until(
        n + " notifications at the receiver", this::total, t -> t >= n, Duration.ofSeconds(60));
  }

  private JsonNode health(String base) throws Exception {
    return WireJson.mapper()
        .readTree(
            http.send(
                    HttpRequest.newBuilder(URI.create(base + "/healthz")).build(),
                    HttpResponse.BodyHandlers.ofString())
                .body());
  }

  private String consumerState(String base) throws Exception {
    return health(base).path("details").path("alerts-consumer").path("state").asText();
  }

  /** A series' value on /metrics (0 when absent). */
  private double metric(String base, String series) throws Exception {
    String text =
        http.send(
                HttpRequest.newBuilder(URI.create(base + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString())
            .body();
    Matcher m = Pattern.compile("(?m)^" + Pattern.quote(series) + " ([0-9.eE+-]+)$").matcher(text);
    return m.find() ? Double.parseDouble(m.group(1)) : 0;
  }
}
