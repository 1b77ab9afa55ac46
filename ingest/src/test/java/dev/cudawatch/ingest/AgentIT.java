package dev.cudawatch.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.cudawatch.common.Topics;
import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.ingest.ship.Shipper;
import dev.cudawatch.kafka.embedded.KafkaBrokerExtension;
import dev.cudawatch.kafka.embedded.TopicReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** The agent against a real broker: rotation, truncation and restarts lose no line. */
class AgentIT {
  @TempDir static Path dir;

  @RegisterExtension
  static final KafkaBrokerExtension BROKER = new KafkaBrokerExtension(Topics.ALL, 2);

  private static AgentSettings settings(Path logs, Path state) {
    return AgentSettings.builder()
        .kafka(new KafkaSettings(BROKER.bootstrapServers(), Map.of()))
        .globs(List.of(logs + "/**.log"))
        .stateDir(state.toString())
        .scanIntervalMs(0)
        .build(); // each pollOnce scans: the test drives the rounds
  }

  private static void append(Path f, String... lines) throws Exception {
    Files.writeString(
        f,
        String.join("\n", lines) + "\n",
        StandardCharsets.UTF_8,
        StandardOpenOption.CREATE,
        StandardOpenOption.APPEND);
  }

  @Test
  void everyLineArrivesOnceThroughRotationTruncationAndRestart() throws Exception {
    Path logs = Files.createDirectories(dir.resolve("logs"));
    Path state = dir.resolve("state");
    Path f = logs.resolve("train.log");
    List<String> expected = new ArrayList<>();
    for (int round = 0; round < 3; round++) {
      try (Shipper shipper = new Shipper(new KafkaSettings(BROKER.bootstrapServers(), Map.of()));
          Agent agent = new Agent(settings(logs, state), shipper, Clock.systemUTC())) {
        for (int i = 0; i < 50; i++) {
          String l = "round " + round + " line " + i;
          append(f, l);
          expected.add(l);
          if (i == 20) {
            agent.pollOnce();
            Files.move(
                f,
                logs.resolve("train.log.1"),
                java.nio.file.StandardCopyOption.REPLACE_EXISTING); // rename rotation
          }
          if (i == 35 && round == 1) {
            agent.pollOnce();
            shipper.flush();
            Files.copy(
                f, logs.resolve("copy.bak"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            Files.write(f, new byte[0], StandardOpenOption.TRUNCATE_EXISTING); // copytruncate
          }
        }
        agent.pollOnce();
        agent.pollOnce();
      }
    }
    // the rotated .log.1 files match the glob too: drop exact duplicates by record id
    Map<String, String> byId = new LinkedHashMap<>();
    for (LogRecord r : readAll()) {
      byId.putIfAbsent(r.id(), r.text());
    }
    List<String> got = new ArrayList<>(byId.values());
    for (String e : expected) {
      assertEquals(true, got.contains(e), "missing: " + e);
    }
    assertEquals(
        expected.size(), got.size(), "no line twice once duplicates are dropped by record id");
  }

  private static List<LogRecord> readAll() throws Exception {
    List<LogRecord> out = new ArrayList<>();
    for (byte[] b :
        TopicReader.readAll(
            BROKER.bootstrapServers(),
            Topics.LOGS,
            1,
            Duration.ofSeconds(3),
            Duration.ofSeconds(60),
            false)) {
      LogRecord r = WireJson.readLogRecord(b);
      if (r.kind() != RecordKind.QUIET) { // a file's writer paused: no line
        out.add(r);
      }
    }
    return out;
  }
}
