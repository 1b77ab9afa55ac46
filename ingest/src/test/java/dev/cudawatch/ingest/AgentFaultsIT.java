package dev.cudawatch.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cudawatch.common.Topics;
import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.ingest.files.FilePosition;
import dev.cudawatch.ingest.ship.DeadLetters;
import dev.cudawatch.ingest.ship.Shipper;
import dev.cudawatch.kafka.embedded.EmbeddedKafkaBroker;
import dev.cudawatch.kafka.embedded.KafkaBrokerExtension;
import dev.cudawatch.kafka.embedded.TopicReader;
import dev.cudawatch.testkit.Await;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Predicate;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** Faults at the agent's edges, against a real broker: planted links, records rejected for good. */
class AgentFaultsIT {
  @RegisterExtension
  final KafkaBrokerExtension kafkaBroker = new KafkaBrokerExtension(); // one per test

  @TempDir Path dir;

  @Test
  void aSymlinkPlantedInAWatchedDirectoryNeverReachesKafka() throws Exception {
    Path secret = Files.writeString(dir.resolve("credentials"), "aws_secret_access_key=SECRET42\n");
    Path token = Files.createDirectories(dir.resolve("serviceaccount")).resolve("token");
    Files.writeString(token, "eyJhbGciOiJSUzI1NiJ9.SECRET43\n");
    Path logs = Files.createDirectories(dir.resolve("logs"));
    Files.createSymbolicLink(logs.resolve("evil.log"), secret);
    Files.createSymbolicLink(logs.resolve("sa"), token.getParent()); // a linked directory
    EmbeddedKafkaBroker broker = kafkaBroker.broker();
    broker.createTopics(Topics.ALL, 2);
    KafkaSettings kafka = new KafkaSettings(broker.bootstrapServers(), Map.of());
    AgentSettings s =
        AgentSettings.builder()
            .kafka(kafka)
            .globs(List.of(logs + "/**"))
            .stateDir(dir.resolve("state").toString())
            .scanIntervalMs(0)
            .build(); // each pollOnce scans: the test drives the rounds
    try (Shipper shipper = new Shipper(kafka);
        Agent agent = new Agent(s, shipper, Clock.systemUTC())) {
      Files.writeString(logs.resolve("train.log"), "step 1\n");
      agent.pollOnce();
      // planted after the agent started, too
      Files.createSymbolicLink(logs.resolve("late.log"), token);
      Files.writeString(
          logs.resolve("train.log"), "step 2\n", java.nio.file.StandardOpenOption.APPEND);
      for (int i = 0; i < 3; i++) {
        agent.pollOnce();
      }
      shipper.flush();
      List<String> texts = texts(broker, l -> l.size() >= 2);
      assertEquals(List.of("step 1", "step 2"), texts);
      assertFalse(texts.stream().anyMatch(t -> t.contains("SECRET")), texts.toString());
      assertEquals(
          3, agent.tailer().refused(), "evil.log, the linked directory, late.log: once each");
    }
  }

  @Test
  void aRecordTheBrokerRejectsIsDeadLetteredNeverSkipped() throws Exception {
    EmbeddedKafkaBroker broker = kafkaBroker.broker();
    // the logs topic takes batches of at most 8 KiB
    broker
        .admin()
        .createTopics(
            List.of(
                new NewTopic(Topics.LOGS, 1, (short) 1)
                    .configs(Map.of("max.message.bytes", "8192"))))
        .all()
        .get();
    // as an operator must: the producer's limit matches the topic's (see Shipper)
    KafkaSettings kafka =
        new KafkaSettings(broker.bootstrapServers(), Map.of("max.request.size", "8192"));
    Path logs = Files.createDirectories(dir.resolve("logs"));
    Path log = logs.resolve("train.log");
    String big = randomText(30_000); // incompressible: too large even with lz4
    Files.writeString(log, "before\n" + big + "\nafter\n");
    long size = Files.size(log);
    long bigStart = "before\n".length();

    // 1. the dead-letter store is full: the position stays before the rejected line
    AgentSettings s =
        AgentSettings.builder()
            .kafka(kafka)
            .globs(List.of(logs + "/*.log"))
            .stateDir(dir.resolve("state").toString())
            .build();
    DeadLetters none = new DeadLetters(dir.resolve("state/dead-letters"), 0, Clock.systemUTC());
    try (Shipper shipper = new Shipper(kafka, none);
        Agent agent = new Agent(s, shipper, Clock.systemUTC())) {
      AgentRounds.untilRead(agent); // the 30,000-byte line takes more than one round's share
      shipper.flush();
      // the rejection can come back between those rounds and rewind the file: at least once
      assertEquals(
          List.of("before", "after"),
          texts(broker, l -> l.size() >= 2).stream().distinct().toList());
      Await.until("the rejection reported", shipper::failed, n -> n >= 1, Duration.ofSeconds(30));
      agent.pollOnce();
      assertEquals(bigStart, position(agent), "never past a line the broker did not take");
    }
    assertEquals(
        bigStart,
        new dev.cudawatch.ingest.files.PositionStore(dir.resolve("state"))
            .load()
            .values()
            .iterator()
            .next()
            .position());

    // 2. restarted with room for dead letters: kept on disk with its reason, then passed
    DeadLetters dead =
        new DeadLetters(dir.resolve("state/dead-letters"), 1 << 20, Clock.systemUTC());
    try (Shipper shipper = new Shipper(kafka, dead);
        Agent agent = new Agent(s, shipper, Clock.systemUTC())) {
      Await.until(
          "the position past the rejected line",
          () -> {
            agent.pollOnce();
            shipper.flush();
            return position(agent);
          },
          p -> p == size,
          Duration.ofSeconds(30));
      assertEquals(1L, dead.counts().get("too_large").get());
    }
    List<String> kept = Files.readAllLines(dir.resolve("state/dead-letters/dead-letters.jsonl"));
    assertEquals(1, kept.size());
    JsonNode letter = WireJson.mapper().readTree(kept.get(0));
    assertEquals("too_large", letter.path("reason").asText());
    LogRecord rec = WireJson.readLogRecord(letter.path("record").asText().getBytes());
    assertEquals(big, rec.text());
    assertEquals(
        "rw-------",
        java.nio.file.attribute.PosixFilePermissions.toString(
            Files.getPosixFilePermissions(dir.resolve("state/dead-letters/dead-letters.jsonl"))));
  }

  private static long position(Agent agent) {
    FilePosition p = agent.tailer().positions().values().iterator().next();
    return p.position();
  }

  private static String randomText(int n) {
    Random r = new Random(13);
    StringBuilder b = new StringBuilder(n);
    for (int i = 0; i < n; i++) {
      b.append((char) ('!' + r.nextInt(90)));
    }
    return b.toString();
  }

  private static List<String> texts(EmbeddedKafkaBroker broker, Predicate<List<byte[]>> done)
      throws Exception {
    List<String> out = new java.util.ArrayList<>();
    for (byte[] b :
        TopicReader.readUntil(
            broker.bootstrapServers(),
            Topics.LOGS,
            done,
            Duration.ofSeconds(2),
            Duration.ofSeconds(60),
            false)) {
      out.add(WireJson.readLogRecord(b).text());
    }
    return out;
  }
}
