package dev.cudawatch.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.Topics;
import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.ingest.run.RunSpools;
import dev.cudawatch.kafka.embedded.EmbeddedKafkaBroker;
import dev.cudawatch.kafka.embedded.KafkaBrokerExtension;
import dev.cudawatch.testkit.Await;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code cudawatch run} with no reachable Kafka spools the job's output; the agent ships it later.
 */
class RunSpoolIT {
  @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();

  @TempDir Path dir;

  @Test
  void aRunWithoutKafkaIsShippedByTheAgentLater() throws Exception {
    Path state = dir.resolve("state");
    Path config = dir.resolve("agent.yaml");
    int deadPort = dev.cudawatch.kafka.embedded.EmbeddedKafkaBroker.freePort();
    Path runSpools = dir.resolve("var-tmp");
    Files.writeString(
        config,
        "kafka:\n  bootstrap_servers: 127.0.0.1:"
            + deadPort
            + "\nstate_dir: "
            + state
            + "\nrun_spool_root: "
            + runSpools
            + "\n");
    RunMain run = new RunMain();
    int code =
        new CommandLine(run)
            .setStopAtPositional(true)
            .execute(
                "--config",
                config.toString(),
                "--job",
                "j7",
                "--drain-seconds",
                "1",
                "--",
                "sh",
                "-c",
                "echo out-line; echo err-line >&2; exit 3");
    assertEquals(3, code, "the command's status");
    assertEquals(1, RunSpools.all(runSpools).size(), "output spooled where the agent looks");

    EmbeddedKafkaBroker broker = KAFKA.broker();
    broker.createTopics(Topics.ALL, 2);
    AgentSettings s =
        AgentSettings.builder()
            .kafka(new KafkaSettings(broker.bootstrapServers(), Map.of()))
            .globs(List.of())
            .stateDir(state.toString())
            .kernelLog(null)
            .gpuSampleIntervalMs(0)
            .httpPort(-1)
            .runSpoolRoot(runSpools.toString())
            .build();
    List<LogRecord> got = new ArrayList<>();
    try (AgentRuntime agent = new AgentRuntime(s, Clock.systemUTC())) {
      agent.start(false);
      try (var c =
          new KafkaConsumer<byte[], byte[]>(
              Map.of(
                  ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                  broker.bootstrapServers(),
                  ConsumerConfig.GROUP_ID_CONFIG,
                  "run",
                  ConsumerConfig.AUTO_OFFSET_RESET_CONFIG,
                  "earliest"),
              new ByteArrayDeserializer(),
              new ByteArrayDeserializer())) {
        c.subscribe(List.of(Topics.LOGS));
        Await.until(
            "the spooled records in Kafka",
            () -> {
              for (var r : c.poll(Duration.ofMillis(200))) {
                got.add(WireJson.readLogRecord(r.value()));
              }
              return got.size();
            },
            n -> n >= 5,
            Duration.ofSeconds(60));
      }
      Await.until(
          "the shipped spool to be removed",
          () -> RunSpools.all(runSpools),
          List::isEmpty,
          Duration.ofSeconds(30));
    }
    assertEquals(5, got.size(), "two lines, their streams' two quiet markers, the exit");
    for (String stream : List.of("stdout", "stderr")) {
      LogRecord line =
          got.stream()
              .filter(r -> r.kind() == RecordKind.LOG && r.stream().equals(stream))
              .findFirst()
              .orElseThrow();
      LogRecord quiet =
          got.stream()
              .filter(r -> r.kind() == RecordKind.QUIET && r.stream().equals(stream))
              .findFirst()
              .orElseThrow();
      assertEquals(line.streamKey(), quiet.streamKey(), "the line's key: its partition");
      assertTrue(got.indexOf(quiet) > got.indexOf(line), "so it arrives after the line");
      assertEquals(
          line.offset() + line.text().length() + 1, quiet.offset(), "at the end of the line");
    }
    assertTrue(
        got.stream()
            .anyMatch(
                r ->
                    r.text().equals("out-line")
                        && r.stream().equals("stdout")
                        && "j7".equals(r.job())));
    assertTrue(
        got.stream().anyMatch(r -> r.text().equals("err-line") && r.stream().equals("stderr")));
    assertTrue(
        got.stream()
            .anyMatch(r -> r.kind() == RecordKind.EXIT && r.text().contains("exit_code=3")));
  }
}
