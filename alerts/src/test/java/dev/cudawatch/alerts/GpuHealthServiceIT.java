package dev.cudawatch.alerts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cudawatch.alerts.handoff.ApiServerDouble;
import dev.cudawatch.alerts.handoff.NodeConditionSettings;
import dev.cudawatch.alerts.http.Health;
import dev.cudawatch.common.Topics;
import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.common.wire.Action;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.kafka.embedded.EmbeddedKafkaBroker;
import dev.cudawatch.kafka.embedded.KafkaBrokerExtension;
import dev.cudawatch.testkit.Await;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The GPU health ledger's recommendations through a real broker to the incident page, the API and
 * (enabled here) the node condition, written to an API-server double over a real socket.
 */
class GpuHealthServiceIT {
  @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();

  @TempDir Path dir;
  private final HttpClient http = HttpClient.newHttpClient();

  private static Action rec(String id, String what, int level, int recoveries, long at) {
    return new Action(
        1,
        id,
        Action.RECOMMENDATION,
        what,
        "because " + id,
        "node-1",
        "0",
        "GPU-1111",
        "job-1",
        79,
        "x-" + id,
        level,
        recoveries,
        recoveries + level,
        level > 0 ? 1800.0 : null,
        Fixtures.T0.plusSeconds(at),
        null);
  }

  @Test
  void recommendationsReachThePageTheApiAndTheNodeCondition() throws Exception {
    Path token = dir.resolve("token");
    Files.writeString(token, "tok");
    EmbeddedKafkaBroker broker = KAFKA.broker();
    try (ApiServerDouble kube = new ApiServerDouble("tok", null)) {
      kube.addNode("node-1");
      broker.createTopics(Topics.ALL, 2);
      AlertsSettings s =
          AlertsSettings.builder()
              .kafka(new KafkaSettings(broker.bootstrapServers(), Map.of()))
              .httpPort(0)
              .nodeConditions(
                  NodeConditionSettings.builder()
                      .enabled(true)
                      .apiServerUrl(kube.url())
                      .tokenFile(token.toString())
                      .retryInitialMs(50L)
                      .heartbeatIntervalMs(3_600_000L)
                      .build())
              .build();
      try (AlertsService svc =
          new AlertsService(
              s, new Health(), null, Clock.fixed(Fixtures.T0.plusSeconds(600), ZoneOffset.UTC))) {
        svc.start();
        String base = "http://127.0.0.1:" + svc.httpPort();
        try (var p =
            new KafkaProducer<byte[], byte[]>(
                Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()),
                new ByteArraySerializer(),
                new ByteArraySerializer())) {
          p.send(
                  new ProducerRecord<>(
                      Topics.INCIDENTS,
                      WireJson.toBytes(
                          Fixtures.incident("xid-3", "gpu_xid", "node-1", "job-1", Fixtures.T0))))
              .get();
          for (Action a :
              List.of(
                  rec("1", "reset_gpu", 0, 1, 0),
                  rec("2", "reset_gpu", 0, 2, 100),
                  rec("3", "inspect", 1, 2, 200),
                  rec("3", "inspect", 1, 2, 200))) { // the last one read again
            p.send(
                    new ProducerRecord<>(
                        Topics.ACTIONS,
                        "GPU-1111".getBytes(StandardCharsets.UTF_8),
                        WireJson.toBytes(a)))
                .get();
          }
          p.send(new ProducerRecord<>(Topics.ACTIONS, "{\"v\":1}".getBytes(StandardCharsets.UTF_8)))
              .get();
        }
        JsonNode gpu =
            Await.until(
                "the GPU at rung 1 in /api/gpus/GPU-1111",
                () -> WireJson.mapper().readTree(get(base + "/api/gpus/GPU-1111")),
                g -> g.path("ladder_level").asInt() == 1,
                Duration.ofSeconds(60));
        assertEquals(2, gpu.get("resets_seen").asInt());
        assertEquals("inspect", gpu.get("recommendation").asText());
        assertEquals(3, gpu.get("recent").size());
        assertEquals(1, WireJson.mapper().readTree(get(base + "/api/gpus")).get("total").asInt());
        String page =
            Await.until(
                "the incident page",
                () -> get(base + "/incident?id=xid-3"),
                h -> h.contains("Repair ladder rung"),
                Duration.ofSeconds(30));
        assertTrue(page.contains("Repair ladder rung 1: inspect the hardware"), page);
        assertTrue(page.contains("<dd id=\"ledger-resets\">2</dd>"), page);
        assertTrue(page.contains("<dd id=\"ledger-mtbi\">30.0 min</dd>"), page);
        assertTrue(page.contains("because 3"), page);
        JsonNode c =
            Await.until(
                "the node condition",
                () -> kube.condition("node-1", "CudawatchGpuProblem"),
                n -> n != null && n.path("reason").asText().equals("GpuInspectionRecommended"),
                Duration.ofSeconds(30));
        assertEquals("True", c.get("status").asText());
        String metrics =
            Await.until(
                "the store and dead-letter metrics",
                () -> get(base + "/metrics"),
                m ->
                    m.contains("cudawatch_gpu_health_states 1.0")
                        && m.contains("cudawatch_gpu_health_duplicates_total 1.0")
                        && m.contains(
                            "cudawatch_dead_letters_total{stage=\"alerts\",topic=\"cudawatch.actions\"} 1.0"),
                Duration.ofSeconds(30));
        assertTrue(metrics.contains("cudawatch_node_condition_writes_total"), metrics);
        // observe-only: the node was read and its status condition patched, nothing else
        assertTrue(
            kube.requests().stream()
                .allMatch(
                    r ->
                        r.equals("GET /api/v1/nodes/node-1")
                            || r.equals("PATCH /api/v1/nodes/node-1/status")),
            kube.requests().toString());
      }
    }
  }

  private String get(String url) throws Exception {
    return http.send(
            HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString())
        .body();
  }
}
