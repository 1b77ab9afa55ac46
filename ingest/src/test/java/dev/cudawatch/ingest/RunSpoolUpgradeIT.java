package dev.cudawatch.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.Topics;
import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.ingest.run.RunSpools;
import dev.cudawatch.ingest.spool.DiskSpool;
import dev.cudawatch.kafka.embedded.EmbeddedKafkaBroker;
import dev.cudawatch.kafka.embedded.KafkaBrokerExtension;
import dev.cudawatch.testkit.Await;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Upgrade: a spool that the previous release's {@code cudawatch run} left in {@code
 * state_dir/spool-run/RUN-ID} (a fixture written by that release's code, commit 61b97b9, see its
 * README) is shipped by today's agent, which is already running when it appears; a spool of today's
 * run appearing meanwhile is shipped too; and once both were forwarded and removed, {@code
 * /healthz} says ok (before: {@code spool-RUN-ID: stopped}, unhealthy for good).
 */
class RunSpoolUpgradeIT {
  @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();

  private static final Path FIXTURE = Path.of("src/test/resources/upgrade/release-61b97b9");

  @TempDir Path dir;

  @Test
  void thePreviousReleasesSpoolAndANewOneAreShippedWhileTheAgentRunsAndItStaysHealthy()
      throws Exception {
    Path fixtureSeg;
    try (Stream<Path> s = Files.walk(FIXTURE.resolve("spool-run"))) {
      fixtureSeg = s.filter(p -> p.toString().endsWith(".seg")).findFirst().orElseThrow();
    }
    try (InputStream in = Files.newInputStream(fixtureSeg)) {
      assertEquals(1, DiskSpool.segmentFormat(in), "the fixture predates versioned segments");
    }
    Path state = dir.resolve("state");
    Path runRoot = dir.resolve("var-tmp");
    EmbeddedKafkaBroker broker = KAFKA.broker();
    broker.createTopics(Topics.ALL, 2);
    AgentSettings s =
        AgentSettings.builder()
            .kafka(new KafkaSettings(broker.bootstrapServers(), Map.of()))
            .globs(List.of())
            .stateDir(state.toString())
            .kernelLog(null)
            .gpuSampleIntervalMs(0)
            .httpPort(0)
            .runSpoolRoot(runRoot.toString())
            .build();
    try (AgentRuntime agent = new AgentRuntime(s, Clock.systemUTC());
        var c = consumer(broker.bootstrapServers())) {
      agent.start(false);
      c.subscribe(List.of(Topics.LOGS));
      // the upgrade: the old release's spool is in the state directory (copied in while the
      // agent runs, so the periodic scan is what finds it); it is old, as after an upgrade
      Path old = state.resolve("spool-run");
      copyTree(FIXTURE.resolve("spool-run"), old);
      try (Stream<Path> runs = Files.list(old)) {
        for (Path r : runs.toList()) {
          Files.setLastModifiedTime(
              r, FileTime.from(Clock.systemUTC().instant().minusSeconds(3600)));
        }
      }
      // today's run, Kafka unreachable for it, finishing while the agent runs
      Path runConfig = dir.resolve("run.yaml");
      Files.writeString(
          runConfig,
          "kafka:\n  bootstrap_servers: 127.0.0.1:"
              + EmbeddedKafkaBroker.freePort()
              + "\nrun_spool_root: "
              + runRoot
              + "\n");
      int code =
          new picocli.CommandLine(new RunMain())
              .setStopAtPositional(true)
              .execute(
                  "--config",
                  runConfig.toString(),
                  "--job",
                  "new-job",
                  "--drain-seconds",
                  "1",
                  "--",
                  "sh",
                  "-c",
                  "echo new-line");
      assertEquals(0, code);

      List<LogRecord> got = new ArrayList<>();
      Await.until(
          "the old release's 3 lines and exit and the new run's line in Kafka",
          () -> {
            for (var r : c.poll(Duration.ofMillis(200))) {
              got.add(WireJson.readLogRecord(r.value()));
            }
            return got;
          },
          g ->
              g.stream().filter(r -> "old-job-1".equals(r.job())).count() >= 4
                  && g.stream().anyMatch(r -> r.text().equals("new-line")),
          Duration.ofSeconds(60));
      List<LogRecord> oldRecords = got.stream().filter(r -> "old-job-1".equals(r.job())).toList();
      assertEquals(
          List.of("epoch 1 loss 0.91", "epoch 2 loss 0.52", "warning: slow"),
          oldRecords.stream()
              .filter(r -> r.kind() == RecordKind.LOG)
              .map(LogRecord::text)
              .sorted()
              .toList());
      assertTrue(
          oldRecords.stream()
              .anyMatch(r -> r.kind() == RecordKind.EXIT && r.text().contains("exit_code=3")));
      for (LogRecord r : oldRecords) {
        assertEquals(s.host(), r.host(), "this agent's host, not the segment's old-node");
      }
      Await.until(
          "both spools removed",
          () -> {
            try (Stream<Path> l = Files.list(old)) {
              return l.count() + RunSpools.all(runRoot).size();
            } catch (Exception e) {
              return -1L;
            }
          },
          n -> n == 0,
          Duration.ofSeconds(30));
      assertEquals(2, agent.runSpools().adopted());
      assertTrue(agent.runSpools().hostMismatches() >= 4, "old-node records were counted");
      HttpResponse<String> health =
          HttpClient.newHttpClient()
              .send(
                  HttpRequest.newBuilder(
                          URI.create("http://127.0.0.1:" + agent.httpPort() + "/healthz"))
                      .build(),
                  HttpResponse.BodyHandlers.ofString());
      assertEquals(200, health.statusCode(), health.body());
      assertEquals(Map.of(), agent.problems());
    }
  }

  private static void copyTree(Path from, Path to) throws Exception {
    try (Stream<Path> s = Files.walk(from)) {
      for (Path p : s.toList()) {
        Path t = to.resolve(from.relativize(p).toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(t);
        } else {
          Files.copy(p, t);
        }
      }
    }
  }

  private static KafkaConsumer<byte[], byte[]> consumer(String bootstrap) {
    return new KafkaConsumer<>(
        Map.of(
            ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
            bootstrap,
            ConsumerConfig.GROUP_ID_CONFIG,
            "upgrade",
            ConsumerConfig.AUTO_OFFSET_RESET_CONFIG,
            "earliest"),
        new ByteArrayDeserializer(),
        new ByteArrayDeserializer());
  }
}
