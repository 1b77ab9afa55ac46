package dev.cudawatch.alerts.notify;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.cudawatch.alerts.AlertsSettings;
import dev.cudawatch.alerts.RealBinaries;
import dev.cudawatch.alerts.metrics.AlertsMetrics;
import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.testkit.Await;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Alerts pushed to a real Alertmanager (Debian's package): listed by its API, then resolved. */
class AlertmanagerIT {
  @TempDir Path dir;
  private final HttpClient http = HttpClient.newHttpClient();

  @Test
  void alertmanagerListsTheAlertAndSeesItResolved() throws Exception {
    Path bin = RealBinaries.require("prometheus-alertmanager");
    int port = RealBinaries.freePort();
    Path config = dir.resolve("alertmanager.yml");
    Files.writeString(config, "route:\n  receiver: blackhole\nreceivers:\n  - name: blackhole\n");
    Process am =
        new ProcessBuilder(
                bin.toString(),
                "--config.file=" + config,
                "--storage.path=" + dir.resolve("data"),
                "--web.listen-address=127.0.0.1:" + port,
                "--cluster.listen-address=")
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("alertmanager.log").toFile())
            .start();
    String base = "http://127.0.0.1:" + port;
    try {
      await(() -> get(base + "/-/ready") == 200, am);
      NotifySettings s =
          NotifySettings.builder()
              .alertmanagerUrl(base)
              .stateDir(dir.resolve("state").toString())
              .build();
      Map<String, String> labels =
          Map.of(
              "alertname", "RepeatedIllegalMemoryAccess",
              "severity", "critical",
              "host", "node-7",
              "gpu", "2");
      Alert firing =
          new Alert(
              1,
              Alert.fingerprintOf(labels),
              Alert.State.FIRING,
              labels,
              Map.of("summary", "3 illegal memory accesses on node-7 GPU 2 within 10 minutes"),
              Instant.now().minusSeconds(60),
              null);
      try (Notifier n =
          new Notifier(
              s, new AlertsMetrics(AlertsSettings.defaults().metricLimits()), Clock.systemUTC())) {
        n.start();
        n.onAlert(firing);
        await(() -> listed(base).size() == 1, am);
        JsonNode a = listed(base).get(0);
        assertEquals("node-7", a.path("labels").path("host").asText());
        assertEquals("active", a.path("status").path("state").asText());
        assertTrue(a.path("annotations").path("summary").asText().startsWith("3 illegal"));
        assertTrue(a.path("generatorURL").asText().endsWith("/"), "no incident: the list");

        n.onAlert(
            new Alert(
                1,
                firing.fingerprint(),
                Alert.State.RESOLVED,
                labels,
                firing.annotations(),
                firing.startsAt(),
                Instant.now()));
        await(() -> listed(base).isEmpty(), am); // resolved alerts leave the active list
      }
    } finally {
      am.destroy();
      am.waitFor(10, TimeUnit.SECONDS);
    }
  }

  private List<JsonNode> listed(String base) {
    try {
      JsonNode arr =
          new ObjectMapper()
              .readTree(
                  http.send(
                          HttpRequest.newBuilder(URI.create(base + "/api/v2/alerts")).build(),
                          HttpResponse.BodyHandlers.ofString())
                      .body());
      List<JsonNode> out = new java.util.ArrayList<>();
      arr.forEach(out::add);
      return out;
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private int get(String url) {
    try {
      return http.send(
              HttpRequest.newBuilder(URI.create(url)).build(),
              HttpResponse.BodyHandlers.discarding())
          .statusCode();
    } catch (Exception e) {
      return -1;
    }
  }

  private static void await(java.util.function.BooleanSupplier done, Process p) {
    Await.until(
        "Alertmanager's API to show it",
        () -> {
          assertTrue(p.isAlive(), "alertmanager exited");
          return done.getAsBoolean();
        },
        Boolean.TRUE::equals,
        java.time.Duration.ofSeconds(30));
  }
}
