package dev.cudawatch.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.cudawatch.common.Topics;
import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.ingest.ship.Shipper;
import dev.cudawatch.kafka.embedded.EmbeddedKafkaBroker;
import dev.cudawatch.kafka.embedded.KafkaBrokerExtension;
import dev.cudawatch.kafka.embedded.TopicReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent's warm-up reads a file through its own per-line path and ships nothing: the broker then
 * holds only the followed file's line, and no count or position mentions the warm-up.
 */
class AgentWarmUpIT {
  @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();

  @TempDir Path dir;

  @Test
  void warmUpReadsEveryLineAndShipsNone() throws Exception {
    EmbeddedKafkaBroker broker = KAFKA.broker();
    broker.createTopics(Topics.ALL, 2);
    KafkaSettings kafka = new KafkaSettings(broker.bootstrapServers(), Map.of());
    Path logs = Files.createDirectories(dir.resolve("logs"));
    Path warm = Files.createDirectories(dir.resolve("warmup")).resolve("agent-warmup.log");
    StringBuilder lines = new StringBuilder();
    for (int i = 0; i < 1_000; i++) {
      lines.append("step ").append(i).append(" | loss 2.31\n");
    }
    Files.writeString(warm, lines);
    AgentSettings s =
        AgentSettings.builder()
            .kafka(kafka)
            .globs(List.of(logs + "/*.log"))
            .stateDir(dir.resolve("state").toString())
            .scanIntervalMs(0)
            .build();
    try (Shipper shipper = new Shipper(kafka);
        Agent agent = new Agent(s, shipper, Clock.systemUTC())) {
      assertEquals(1_000, agent.warmUp(warm), "every line read");
      assertEquals(0, agent.linesRead(), "none counted as the node's lines");

      Files.writeString(logs.resolve("job-9.log"), "torch.OutOfMemoryError: CUDA out of memory\n");
      agent.pollOnce();
      shipper.flush();
      List<byte[]> shipped =
          TopicReader.readAll(
              broker.bootstrapServers(),
              Topics.LOGS,
              1,
              Duration.ofSeconds(1),
              Duration.ofSeconds(30),
              false);
      assertEquals(1, shipped.size(), "only the followed file's line");
      assertEquals(
          "torch.OutOfMemoryError: CUDA out of memory",
          WireJson.readLogRecord(shipped.get(0)).text());
      assertEquals(1, shipper.sent());
      assertEquals(
          List.of(logs.resolve("job-9.log").toString()),
          agent.tailer().positions().values().stream().map(p -> p.path()).toList(),
          "no position kept for the warm-up file");
    }
  }
}
