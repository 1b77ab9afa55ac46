package dev.cudawatch.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.kafka.embedded.EmbeddedKafkaBroker;
import dev.cudawatch.testkit.Await;
import dev.cudawatch.testkit.Tmpfs;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** /healthz of the agent says which source is broken: a dead kernel log, a spool on a full disk. */
class AgentHealthIT {
  private static final int RECORDS = 1_500;
  @TempDir Path dir;

  private AgentSettings settings(Path state, String kernelLog) throws Exception {
    Path proc = dir.resolve("proc");
    KernelLogRebootIT.boot(proc, "11111111-2222-3333-4444-555555555555", 1_763_800_000L);
    // nothing listens there: the spool cannot drain, so what sources write stays on disk
    String nobody = "127.0.0.1:" + EmbeddedKafkaBroker.freePort();
    return AgentSettings.builder()
        .kafka(new KafkaSettings(nobody, Map.of()))
        .globs(List.of())
        .stateDir(state.toString())
        .kernelLog(kernelLog)
        .gpuSampleIntervalMs(0)
        .httpPort(0)
        .closeInactiveMs(300_000)
        .procDir(proc.toString())
        .build();
  }

  @Test
  void aSourceThreadThatDiesMakesTheAgentUnhealthyByName() throws Exception {
    AgentSettings s = settings(dir.resolve("state"), dir.resolve("no-such-dir/kmsg").toString());
    try (AgentRuntime agent = new AgentRuntime(s, Clock.systemUTC())) {
      agent.start(false);
      HttpResponse<String> r =
          Await.until(
              "/healthz to report the dead kernel log",
              () -> get(agent.httpPort(), "/healthz"),
              x -> x.statusCode() == 503,
              Duration.ofSeconds(20));
      JsonNode body = WireJson.mapper().readTree(r.body());
      assertEquals("unhealthy", body.path("status").asText());
      assertTrue(body.path("problems").path("kmsg").asText().contains("no-such-dir"), r.body());
      assertTrue(get(agent.httpPort(), "/metrics").body().contains("cudawatch_agent_healthy 0.0"));
    }
  }

  @Test
  void aSpoolOnAFullDiskMakesTheAgentUnhealthyUntilThereIsRoomAgain() throws Exception {
    Path disk = dir.resolve("disk");
    try (Tmpfs mounted = Tmpfs.mount(disk, "1m")) {
      Path kmsg = dir.resolve("kmsg");
      Files.writeString(kmsg, "");
      Path filler = disk.resolve("filler");
      Files.write(filler, new byte[768 * 1024]); // room to give back later
      AgentSettings s = settings(disk.resolve("state"), kmsg.toString());
      try (AgentRuntime agent = new AgentRuntime(s, Clock.systemUTC())) {
        agent.start(false);
        Await.until(
            "healthy at start",
            () -> get(agent.httpPort(), "/healthz").statusCode(),
            c -> c == 200,
            Duration.ofSeconds(20));
        long seq = 0;
        StringBuilder b = new StringBuilder();
        for (; seq < RECORDS; seq++) {
          b.append("4,")
              .append(seq)
              .append(",1000,-;NVRM: Xid (PCI:0000:3b:00): 79, pid=")
              .append(seq)
              .append(", GPU has fallen off the bus.\n");
        }
        // ~600 KB of spooled records: more than the room left, less than the room given back
        Files.writeString(kmsg, b, StandardOpenOption.APPEND);
        HttpResponse<String> r =
            Await.until(
                "/healthz to report the spool",
                () -> get(agent.httpPort(), "/healthz"),
                x -> x.statusCode() == 503,
                Duration.ofSeconds(30));
        assertTrue(
            WireJson.mapper()
                .readTree(r.body())
                .path("problems")
                .path("spool")
                .asText()
                .contains("No space left on device"),
            r.body());
        Await.until(
            "the kernel source to wait for room, offering the record again",
            () -> agent.kernelSource().spoolRetries(),
            n -> n > 1,
            Duration.ofSeconds(30));
        assertTrue(
            get(agent.httpPort(), "/metrics")
                .body()
                .contains("cudawatch_agent_kmsg_spool_retries_total"));
        long taken = agent.kernelSource().shipped();
        assertTrue(taken < RECORDS, "the kernel source waits, it drops nothing: " + taken);

        Files.delete(filler);
        Await.until(
            "healthy again once the spool can be written",
            () -> get(agent.httpPort(), "/healthz").statusCode(),
            c -> c == 200,
            Duration.ofSeconds(30));
        Await.until(
            "every record spooled once there was room",
            () -> agent.kernelSource().shipped(),
            n -> n == RECORDS,
            Duration.ofSeconds(30));
        System.out.println(
            "AgentHealthIT: " + agent.spool().totalBytes() / RECORDS + " spool bytes a record");
        assertEquals(0, agent.spoolErrors(), "no kernel record lost");
      }
    }
  }

  private static HttpResponse<String> get(int port, String path) throws Exception {
    return HttpClient.newHttpClient()
        .send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(5))
                .build(),
            HttpResponse.BodyHandlers.ofString());
  }
}
