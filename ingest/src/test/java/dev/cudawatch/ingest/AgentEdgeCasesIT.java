package dev.cudawatch.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.Topics;
import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.ingest.framing.LineFramer;
import dev.cudawatch.ingest.ship.Shipper;
import dev.cudawatch.kafka.embedded.EmbeddedKafkaBroker;
import dev.cudawatch.kafka.embedded.KafkaBrokerExtension;
import dev.cudawatch.kafka.embedded.TopicReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** Hostile input: the agent counts what it must change, ships the rest, and keeps running. */
class AgentEdgeCasesIT {
  @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();

  @TempDir Path dir;

  @Test
  void hugeLinesBadBytesDeletedFilesAndUnreadableDirectories() throws Exception {
    EmbeddedKafkaBroker broker = KAFKA.broker();
    broker.createTopics(Topics.ALL, 2);
    KafkaSettings kafka = new KafkaSettings(broker.bootstrapServers(), Map.of());
    Path logs = Files.createDirectories(dir.resolve("logs"));
    Path locked = Files.createDirectories(logs.resolve("locked"));
    Files.writeString(locked.resolve("secret.log"), "hidden\n");
    Files.setPosixFilePermissions(locked, PosixFilePermissions.fromString("---------"));
    boolean canDeny = !Files.isReadable(locked); // root reads everything
    AgentSettings s =
        AgentSettings.builder()
            .kafka(kafka)
            .globs(List.of(logs + "/**.log"))
            .stateDir(dir.resolve("state").toString())
            .scanIntervalMs(0)
            .build(); // each pollOnce scans: the test drives the rounds
    try (Shipper shipper = new Shipper(kafka);
        Agent agent = new Agent(s, shipper, Clock.systemUTC())) {
      try (OutputStream o = Files.newOutputStream(logs.resolve("big.log"))) {
        o.write("before\n".getBytes(StandardCharsets.UTF_8));
        byte[] big = new byte[10 << 20];
        java.util.Arrays.fill(big, (byte) 'x');
        o.write(big);
        o.write("\nbad \u0000 nul \n".getBytes(StandardCharsets.UTF_8));
        o.write(new byte[] {'u', 't', 'f', (byte) 0xC3, (byte) 0x28, '\n'});
        o.write("after\n".getBytes(StandardCharsets.UTF_8));
      }
      Path doomed = logs.resolve("doomed.log");
      Files.writeString(doomed, "first\n");
      AgentRounds.untilRead(agent); // the 10 MiB line takes many rounds' shares
      Files.writeString(doomed, "second\n", java.nio.file.StandardOpenOption.APPEND);
      Files.delete(doomed); // deleted while open: what it still holds is shipped
      AgentRounds.untilRead(agent);
      shipper.flush();
      List<String> texts = read(broker.bootstrapServers(), 8);
      assertTrue(texts.contains("before"));
      assertTrue(texts.contains("after"));
      assertTrue(texts.contains("bad \u0000 nul "));
      assertTrue(texts.contains("utf\uFFFD("));
      assertTrue(texts.contains("first") && texts.contains("second"), texts.toString());
      String cut = texts.stream().filter(t -> t.startsWith("xxx")).findFirst().orElseThrow();
      assertEquals(s.maxLineBytes() + LineFramer.TRUNCATED_MARKER.length(), cut.length());
      assertEquals(1, agent.truncatedLines());
      if (canDeny) {
        assertTrue(agent.tailer().unreadable() > 0, "the unreadable directory is counted");
        assertTrue(!texts.contains("hidden"));
      }
    } finally {
      Files.setPosixFilePermissions(locked, PosixFilePermissions.fromString("rwx------"));
    }
  }

  private static List<String> read(String bootstrap, int atLeast) throws Exception {
    List<String> out = new ArrayList<>();
    for (byte[] b :
        TopicReader.readAll(
            bootstrap,
            Topics.LOGS,
            atLeast,
            Duration.ofSeconds(1),
            Duration.ofSeconds(30),
            false)) {
      out.add(WireJson.readLogRecord(b).text());
    }
    return out;
  }
}
