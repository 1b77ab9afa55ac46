package dev.cudawatch.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cudawatch.common.Topics;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.ingest.streams.PciMap;
import dev.cudawatch.kafka.embedded.EmbeddedKafkaBroker;
import dev.cudawatch.kafka.embedded.KafkaBrokerExtension;
import dev.cudawatch.kafka.embedded.TopicReader;
import dev.cudawatch.testkit.Await;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * nvidia-smi hangs (a wedged GPU) from the agent's start: /healthz answers and a file's line
 * reaches the broker before any hung call reaches its 10 s deadline, so neither waited for one (on
 * a quiet machine both take about a second: the test prints the figures); the sampler's hung run is
 * killed at its deadline and counted, /healthz warns and stays ok, and no two sampler runs are
 * alive at once.
 */
class AgentNvidiaSmiHungIT {
  @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();

  @TempDir Path dir;

  @Test
  void aHungNvidiaSmiNeitherDelaysShippingNorFailsHealth() throws Exception {
    Path pids = Files.createDirectories(dir.resolve("sampler-pids"));
    Path smi = dir.resolve("nvidia-smi");
    // every call hangs; the sampler's (-lms) calls note their pid
    Files.writeString(
        smi,
        "#!/bin/sh\n"
            + "case \"$*\" in *-lms*) echo $$ > '"
            + pids
            + "'/$$ ;; esac\n"
            + "sleep 600\n");
    assertTrue(smi.toFile().setExecutable(true));
    Path logs = Files.createDirectories(dir.resolve("logs"));
    Files.writeString(logs.resolve("rank-0.log"), "step 1 loss 0.7 while nvidia-smi hangs\n");
    Path kmsg = dir.resolve("kmsg");
    Files.writeString(kmsg, "");
    Path proc = dir.resolve("proc");
    KernelLogRebootIT.boot(proc, "11111111-2222-3333-4444-555555555555", 1_763_800_000L);
    int port = EmbeddedKafkaBroker.freePort();
    EmbeddedKafkaBroker broker = KAFKA.broker();
    broker.createTopics(Topics.ALL, 2);
    Path config = dir.resolve("agent.yaml");
    Files.writeString(
        config,
        String.join(
            "\n",
            "kafka:",
            "  bootstrap_servers: " + broker.bootstrapServers(),
            "host: hung-smi",
            "files: ['" + logs + "/*.log']",
            "state_dir: " + dir.resolve("state"),
            "kernel_log: " + kmsg,
            "proc_dir: " + proc,
            "nvidia_smi: " + smi,
            "gpu_sample_interval_ms: 1000",
            "http_port: " + port,
            "run_spool_root: " + dir.resolve("spools"),
            ""));
    long launched = System.nanoTime();
    try (AgentProcess agent = AgentProcess.start(config, dir.resolve("agent.out"))) {
      // from the agent's own start: the JVM's boot before it (seconds on a loaded machine) is
      // the same whatever nvidia-smi does
      Await.until(
          "the agent's start",
          () -> agent.output().contains("cudawatch agent: starting"),
          Boolean.TRUE::equals,
          Duration.ofSeconds(60));
      long t0 = System.nanoTime();
      HttpResponse<String> health =
          Await.until(
              "/healthz to answer",
              () -> get(port, "/healthz"),
              r -> r != null && r.statusCode() == 200,
              Duration.ofSeconds(30));
      long healthMs = (System.nanoTime() - t0) / 1_000_000;
      TopicReader.readUntil(
          broker.bootstrapServers(),
          Topics.LOGS,
          got -> !got.isEmpty(),
          Duration.ZERO,
          Duration.ofSeconds(30),
          false);
      long shippedMs = (System.nanoTime() - t0) / 1_000_000;
      // a start that waited for nvidia-smi would answer only after a call was killed at its
      // deadline: ordering against the kill, not a wall-clock bound, so a loaded machine passes
      long timeoutsWhenShipped = timeouts(get(port, "/metrics").body());
      System.out.println(
          "AgentNvidiaSmiHungIT: /healthz answered "
              + healthMs
              + " ms and the line was in Kafka "
              + shippedMs
              + " ms after the agent started ("
              + (t0 - launched) / 1_000_000
              + " ms after its JVM was launched)");
      assertTrue(
          !health.body().contains("timed out"),
          "/healthz answered before any nvidia-smi call was killed: " + health.body());
      assertEquals(
          0,
          timeoutsWhenShipped,
          "the line shipped before any nvidia-smi call was killed (" + shippedMs + " ms)");
      assertTrue(
          healthMs < PciMap.DEADLINE.toMillis() && shippedMs < PciMap.DEADLINE.toMillis(),
          "neither waited for a hung call's deadline: " + healthMs + " / " + shippedMs + " ms");

      JsonNode body =
          WireJson.mapper()
              .readTree(
                  Await.until(
                          "the hung calls counted as timeouts and warned about",
                          () -> get(port, "/healthz"),
                          r -> r != null && r.body().contains("timed out"),
                          Duration.ofSeconds(60))
                      .body());
      assertEquals("ok", body.path("status").asText(), body.toString());
      assertEquals("timed out", body.path("warnings").path("nvidia-smi").asText());
      String metrics = get(port, "/metrics").body();
      assertTrue(timeouts(metrics) >= 1, metrics);
      assertTrue(liveSamplerRuns(pids) <= 1, "one sampler run at a time");
      assertTrue(agent.process.isAlive());
    }
  }

  private static long timeouts(String metrics) {
    return metrics
        .lines()
        .filter(l -> l.startsWith("cudawatch_agent_nvidia_smi_timeouts_total "))
        .mapToLong(l -> (long) Double.parseDouble(l.split(" ")[1]))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no nvidia-smi timeouts counter: " + metrics));
  }

  /** Sampler runs of the fake nvidia-smi still alive. */
  private static long liveSamplerRuns(Path pids) throws Exception {
    try (Stream<Path> s = Files.list(pids)) {
      List<Path> all = s.toList();
      long live = 0;
      for (Path p : all) {
        long pid = Long.parseLong(Files.readString(p).strip());
        if (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
          live++;
        }
      }
      return live;
    }
  }

  private static HttpResponse<String> get(int port, String path) {
    try {
      return HttpClient.newHttpClient()
          .send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                  .timeout(Duration.ofSeconds(2))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
    } catch (Exception e) {
      return null; // not up yet
    }
  }
}
