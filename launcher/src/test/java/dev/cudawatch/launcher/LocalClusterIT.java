package dev.cudawatch.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.testkit.Await;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 2's promise, on real parts: a CUDA OOM traceback written into a watched log file becomes an
 * incident at /metrics and /api/incidents, through the agent, Kafka, Flink (parallelism 2) and the
 * alerts service.
 */
class LocalClusterIT {
  @TempDir Path dir;
  private final HttpClient http = HttpClient.newHttpClient();

  @Test
  void anOomTracebackInAWatchedFileReachesMetricsAndTheApi() throws Exception {
    ByteArrayOutputStream console = new ByteArrayOutputStream();
    Path logs = dir.resolve("logs");
    // a webhook receiver, as `local --webhook URL` wires one
    List<String> webhook = new java.util.concurrent.CopyOnWriteArrayList<>();
    HttpServer receiver = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    receiver.createContext(
        "/hook",
        ex -> {
          webhook.add(new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
          ex.sendResponseHeaders(200, -1);
          ex.close();
        });
    receiver.start();
    var options =
        new LocalCluster.Options(
            dir.resolve("data"),
            logs,
            null,
            0,
            2,
            null,
            "http://127.0.0.1:" + receiver.getAddress().getPort() + "/hook",
            null,
            List.of());
    try (LocalCluster cluster =
        new LocalCluster(options, new PrintStream(console, true, StandardCharsets.UTF_8))) {
      cluster.start();
      String base = "http://127.0.0.1:" + cluster.httpPort();
      await(() -> get(base + "/healthz").contains("\"status\":\"ok\""));

      // a training job writes its stderr line by line, the traceback last
      Path log = logs.resolve("job-1234.log");
      Files.writeString(log, "epoch 1 step 10 loss 0.52\n", StandardOpenOption.CREATE);
      for (String line :
          Files.readAllLines(Path.of("../diagnosis/src/test/resources/golden/oom_single.log"))) {
        Files.writeString(log, line + "\n", StandardOpenOption.APPEND);
      }

      await(() -> get(base + "/metrics").contains("cudawatch_incidents_total{class=\"cuda_oom\""));
      JsonNode body = WireJson.mapper().readTree(get(base + "/api/incidents?class=cuda_oom"));
      assertEquals(1, body.get("total").asInt());
      JsonNode inc = body.get("incidents").get(0);
      assertEquals(log.toAbsolutePath().toString(), inc.get("source").asText());
      assertEquals(214748364800L, inc.get("fields").get("tried_to_allocate_bytes").asLong());
      assertTrue(inc.get("root").asBoolean());
      await(
          () ->
              console
                  .toString(StandardCharsets.UTF_8)
                  .contains("ALERT firing GpuJobFailure severity=error class=cuda_oom"));
      // after the group wait, the webhook gets Alertmanager's payload for it
      await(() -> webhook.stream().anyMatch(b -> b.contains("\"alertname\":\"GpuJobFailure\"")));
      JsonNode hook = WireJson.mapper().readTree(webhook.get(0));
      assertEquals("4", hook.get("version").asText());
      assertEquals("firing", hook.get("status").asText());
    } finally {
      receiver.stop(0);
    }
  }

  private String get(String url) {
    try {
      return http.send(
              HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString())
          .body();
    } catch (Exception e) {
      return "";
    }
  }

  /** Waits for the real pipeline, bounded: a broken build fails in 90 s instead of hanging. */
  private static void await(java.util.function.BooleanSupplier ok) {
    Await.until("the pipeline's state", ok, java.time.Duration.ofSeconds(90));
  }
}
