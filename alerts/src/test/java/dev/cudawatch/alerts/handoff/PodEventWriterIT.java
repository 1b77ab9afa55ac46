package dev.cudawatch.alerts.handoff;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.testkit.Await;
import dev.cudawatch.testkit.StepClock;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kubernetes Events on the failing pod, against {@link ApiServerDouble} (the node conditions' API
 * server double, which validates an Event's required fields as the API server does): one Event per
 * pod and class with a series for repeats, nothing for incidents that do not page or name no pod,
 * wrong credentials counted, and a full queue dropping and counting without blocking.
 */
class PodEventWriterIT {
  private static final Instant T0 = Instant.parse("2026-11-22T03:00:00Z");
  private static final String TOKEN = "s3cret-token";
  private static final String POD_LOG =
      "/var/log/pods/ml_train-7-worker-0_0b1c2d3e-aaaa-bbbb-cccc-123456789012/pytorch/0.log";

  @TempDir Path dir;
  private final PrometheusRegistry registry = new PrometheusRegistry();
  private final StepClock clock = new StepClock(T0);
  private ApiServerDouble api;
  private PodEventWriter writer;

  private PodEventWriter writer(String token, int perMinute, int queue) throws IOException {
    api = new ApiServerDouble(TOKEN, null);
    Path tokenFile = dir.resolve("token");
    Files.writeString(tokenFile, token + "\n");
    writer =
        new PodEventWriter(
            NodeConditionSettings.builder()
                .apiServerUrl(api.url())
                .tokenFile(tokenFile.toString())
                .retryInitialMs(50L)
                .podEvents(true)
                .podEventsPerMinute(perMinute)
                .podEventQueue(queue)
                .build(),
            "https://cw.example",
            "alerts-0",
            registry,
            clock);
    writer.start();
    return writer;
  }

  @AfterEach
  void stop() throws InterruptedException {
    if (writer != null) {
      writer.close();
    }
    if (api != null) {
      api.close();
    }
  }

  static Incident incident(String id, String cls, String severity, String source) {
    return Incident.builder(id, cls)
        .severity(severity)
        .summary("CUDA out of memory: tried to allocate 20.00 GiB")
        .source(source)
        .host("gpu-node-3")
        .build();
  }

  @Test
  void aPagingIncidentBecomesAWarningEventOnItsPodAndRepeatsASeries() throws Exception {
    writer(TOKEN, 600, 100);
    writer.onIncident(incident("a", "info_thing", "warning", POD_LOG)); // does not page
    writer.onIncident(incident("b", "cuda_oom", "error", "/var/log/train.log")); // no pod
    writer.onIncident(incident("s:0#1", "cuda_oom", "error", POD_LOG));
    Await.until("the Event", () -> api.events().size() == 1, Duration.ofSeconds(30));
    JsonNode e = api.events().get(0);
    assertEquals("ml", e.path("metadata").path("namespace").asText());
    assertTrue(e.path("metadata").path("name").asText().startsWith("train-7-worker-0."));
    assertEquals("Pod", e.path("regarding").path("kind").asText());
    assertEquals("train-7-worker-0", e.path("regarding").path("name").asText());
    assertEquals("ml", e.path("regarding").path("namespace").asText());
    assertEquals("cuda_oom", e.path("reason").asText());
    assertEquals("Warning", e.path("type").asText());
    assertEquals(PodEventWriter.CONTROLLER, e.path("reportingController").asText());
    assertEquals("2026-11-22T03:00:00.000000Z", e.path("eventTime").asText());
    assertEquals(
        "CUDA out of memory: tried to allocate 20.00 GiB https://cw.example/incident?id=s%3A0%231",
        e.path("note").asText());

    // the same class on the same pod again: the first Event's series, not a second Event
    clock.advance(Duration.ofSeconds(90));
    writer.onIncident(incident("s:0#9", "cuda_oom", "error", POD_LOG));
    Await.until(
        "the series",
        () -> api.events().get(0).path("series").path("count").asInt() == 2,
        Duration.ofSeconds(30));
    assertEquals(1, api.events().size());
    assertEquals(
        "2026-11-22T03:01:30.000000Z",
        api.events().get(0).path("series").path("lastObservedTime").asText());
    // an OpenTelemetry source (namespace/pod/container) names its pod too
    writer.onIncident(incident("o:1", "nccl_timeout", "critical", "ml/train-7-worker-1/pytorch"));
    Await.until("the second pod's Event", () -> api.events().size() == 2, Duration.ofSeconds(30));
    // the writer counts once the API server's answer is back, a moment after the double holds it
    Await.until(
        "the counts",
        () -> {
          String m = scrape();
          return m.contains("cudawatch_pod_events_total{result=\"created\"} 2.0")
              && m.contains("cudawatch_pod_events_total{result=\"series\"} 1.0");
        },
        Duration.ofSeconds(30));
  }

  @Test
  void wrongCredentialsAreCountedNotRetried() throws Exception {
    writer("wrong-token", 600, 100);
    writer.onIncident(incident("s:0#1", "cuda_oom", "error", POD_LOG));
    Await.until(
        "the failure counted",
        () -> scrape().contains("cudawatch_pod_event_failures_total{reason=\"unauthorized\"} 1.0"),
        Duration.ofSeconds(30));
    assertTrue(api.events().isEmpty());
  }

  /** One Event a minute and a queue of one: a burst is dropped and counted, never waited for. */
  @Test
  void aFullQueueDropsAndCountsWithoutBlocking() throws Exception {
    writer(TOKEN, 1, 1);
    long t = System.nanoTime();
    for (int i = 0; i < 100; i++) {
      writer.onIncident(incident("s:0#" + i, "cuda_oom", "error", POD_LOG));
    }
    // generous: 100 offers to a full queue take microseconds, a blocked one would take minutes
    assertTrue(System.nanoTime() - t < Duration.ofSeconds(5).toNanos(), "blocked");
    assertTrue(writer.queued() <= 1);
    String m = scrape();
    var dropped =
        java.util.regex.Pattern.compile(
                "cudawatch_pod_event_failures_total\\{reason=\"queue_full\"} (\\d+)\\.0")
            .matcher(m);
    assertTrue(dropped.find(), m);
    assertTrue(Integer.parseInt(dropped.group(1)) >= 97, m);
  }

  private String scrape() {
    try {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      PrometheusTextFormatWriter.builder()
          .setIncludeCreatedTimestamps(false)
          .build()
          .write(out, registry.scrape());
      return out.toString(StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }
}
