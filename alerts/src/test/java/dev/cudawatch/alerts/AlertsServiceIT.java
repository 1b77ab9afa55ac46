package dev.cudawatch.alerts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cudawatch.alerts.http.Health;
import dev.cudawatch.common.Topics;
import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.kafka.embedded.KafkaBrokerExtension;
import dev.cudawatch.testkit.Await;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** The service against a real broker and over real sockets. */
class AlertsServiceIT {
  @RegisterExtension
  static final KafkaBrokerExtension BROKER = new KafkaBrokerExtension(Topics.ALL, 2);

  @TempDir Path dir;
  private final HttpClient http = HttpClient.newHttpClient();

  @Test
  void incidentsReachMetricsAndTheApiAndBadRecordsAreDeadLettered() throws Exception {
    ByteArrayOutputStream console = new ByteArrayOutputStream();
    AlertsSettings s =
        AlertsSettings.builder()
            .kafka(new KafkaSettings(BROKER.bootstrapServers(), Map.of()))
            .httpPort(0)
            .build();
    try (AlertsService svc =
        new AlertsService(
            s,
            new Health(),
            new PrintStream(console, true, StandardCharsets.UTF_8),
            Clock.fixed(Fixtures.T0.plusSeconds(30), java.time.ZoneOffset.UTC))) {
      svc.start();
      String base = "http://127.0.0.1:" + svc.httpPort();
      try (var p = BROKER.producer()) {
        p.send(
                new ProducerRecord<>(
                    Topics.INCIDENTS,
                    WireJson.toBytes(
                        Fixtures.incident("a1", "cuda_oom", "node-1", "j1", Fixtures.T0))))
            .get();
        p.send(
                new ProducerRecord<>(
                    Topics.INCIDENTS, "not json at all".getBytes(StandardCharsets.UTF_8)))
            .get();
        p.send(
                new ProducerRecord<>(
                    Topics.INCIDENTS,
                    WireJson.toJson(Fixtures.incident("a2", "cuda_oom", "n", "j", Fixtures.T0))
                        .replace("\"v\":1", "\"v\":2")
                        .getBytes(StandardCharsets.UTF_8)))
            .get();
        Map<String, String> labels =
            Map.of(
                "alertname",
                "GpuJobFailure",
                "class",
                "cuda_oom",
                "severity",
                "error",
                "host",
                "node-1");
        Alert a =
            new Alert(
                1,
                Alert.fingerprintOf(labels),
                Alert.State.FIRING,
                labels,
                Map.of("summary", "CUDA out of memory"),
                Fixtures.T0,
                null);
        p.send(new ProducerRecord<>(Topics.ALERTS, WireJson.toBytes(a))).get();
        p.send(
                new ProducerRecord<>(
                    Topics.ALERTS, "{\"v\":1,\"fingerprint\":".getBytes(StandardCharsets.UTF_8)))
            .get();
        // two jobs failing on one GPU give it a lemon score of 2
        for (String job : new String[] {"job-a", "job-b"}) {
          p.send(
                  new ProducerRecord<>(
                      Topics.INCIDENTS,
                      WireJson.toBytes(
                          Fixtures.incident(
                              "l-" + job, "illegal_memory_access", "node-4", job, Fixtures.T0))))
              .get();
        }
      }
      // each assertion waits for its own state: the two topics are read independently
      String metrics =
          metricsShowing(
              base,
              "cudawatch_dead_letters_total{stage=\"alerts\",topic=\"cudawatch.incidents\"} 2.0",
              "cudawatch_incidents_total{class=\"cuda_oom\",host=\"node-1\",severity=\"error\",suspect=\"application\"} 1.0",
              "cudawatch_alerts_active{alertname=\"GpuJobFailure\",severity=\"error\"} 1.0",
              "cudawatch_gpu_lemon_score{gpu=\"0\",host=\"node-4\"} 2.0",
              "cudawatch_dead_letters_total{stage=\"alerts\",topic=\"cudawatch.alerts\"} 1.0");
      JsonNode body =
          WireJson.mapper().readTree(get(base + "/api/incidents?class=cuda_oom&host=node-1"));
      assertEquals(1, body.get("total").asInt());
      assertEquals("a1", body.get("incidents").get(0).get("id").asText());
      assertEquals(1, WireJson.mapper().readTree(get(base + "/api/alerts")).get("alerts").size());
      assertEquals(200, status(base + "/healthz"));
      assertEquals(400, status(base + "/api/incidents?since=yesterday"));
      assertTrue(
          console
              .toString(StandardCharsets.UTF_8)
              .contains("ALERT firing GpuJobFailure severity=error class=cuda_oom host=node-1"));
      scrapedByRealPrometheus(svc.httpPort(), metrics);
      // lag is measured every 5 s once the consumer owns its partitions
      metricsShowing(base, "cudawatch_consumer_lag_records{topic=\"cudawatch.incidents\"} 0.0");
    }
  }

  /**
   * A real Prometheus (Debian's package) scrapes the service; promtool finds the series through
   * Prometheus' API and has nothing to say about the exposition format.
   */
  private void scrapedByRealPrometheus(int servicePort, String metricsText) throws Exception {
    Path promtool = RealBinaries.require("promtool");
    Path text = dir.resolve("metrics.txt");
    Files.writeString(text, metricsText);
    Process lint =
        new ProcessBuilder(promtool.toString(), "check", "metrics")
            .redirectInput(text.toFile())
            .redirectErrorStream(true)
            .start();
    String lintOut = new String(lint.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, lint.waitFor(), lintOut);
    assertEquals("", lintOut.strip(), "promtool check metrics");

    try (RealPrometheus p = RealPrometheus.start(dir, servicePort)) {
      String[] query = {
        promtool.toString(),
        "query",
        "instant",
        p.url(),
        "cudawatch_incidents_total{class=\"cuda_oom\",host=\"node-1\"}"
      };
      String out =
          Await.until(
              "the series in Prometheus (its first scrapes)",
              () -> {
                assertTrue(p.isAlive(), "prometheus exited");
                Process q = new ProcessBuilder(query).redirectErrorStream(true).start();
                String o = new String(q.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                q.waitFor();
                return o;
              },
              o -> o.contains("node-1"),
              Duration.ofSeconds(60));
      assertTrue(out.contains("=> 1 @"), out);
      assertTrue(out.contains("suspect=\"application\""), out);
    }
  }

  private String get(String url) throws Exception {
    return http.send(
            HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString())
        .body();
  }

  private int status(String url) throws Exception {
    return http.send(
            HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.discarding())
        .statusCode();
  }

  /** Waits until the service's metrics show every line, and returns them. */
  private String metricsShowing(String base, String... lines) {
    return Await.until(
        "/metrics to show " + String.join(" and ", lines),
        () -> get(base + "/metrics"),
        m -> java.util.Arrays.stream(lines).allMatch(m::contains),
        Duration.ofSeconds(60));
  }
}
