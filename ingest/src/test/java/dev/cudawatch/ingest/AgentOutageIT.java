package dev.cudawatch.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.Topics;
import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.ingest.ship.Shipper;
import dev.cudawatch.kafka.embedded.KafkaBrokerExtension;
import java.io.BufferedWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** The broker goes away for 30 s while a job keeps writing: the agent waits, then ships it all. */
class AgentOutageIT {
  @RegisterExtension
  static final KafkaBrokerExtension BROKER = new KafkaBrokerExtension(Topics.ALL, 2);

  @TempDir Path dir;

  @Test
  void aThirtySecondBrokerOutageLosesNothing() throws Exception {
    KafkaSettings kafka = new KafkaSettings(BROKER.bootstrapServers(), Map.of());
    Path logs = Files.createDirectories(dir.resolve("logs"));
    AgentSettings s =
        AgentSettings.builder()
            .kafka(kafka)
            .globs(List.of(logs + "/*.log"))
            .stateDir(dir.resolve("state").toString())
            .scanIntervalMs(0) // each pollOnce scans: the test drives the rounds
            .build();
    Set<String> expected = new HashSet<>();
    try (Shipper shipper = new Shipper(kafka);
        Agent agent = new Agent(s, shipper, Clock.systemUTC());
        BufferedWriter w =
            Files.newBufferedWriter(logs.resolve("job.log"), StandardCharsets.UTF_8)) {
      Thread loop = new Thread(agent, "agent");
      loop.setDaemon(true);
      loop.start();
      int n = 0;
      // the fault is a length of time: 3 s up, 30 s down, 3 s up again (monotonic clock)
      n = writeFor(Duration.ofSeconds(3), w, n, expected);
      BROKER.stop(); // the broker is gone
      n = writeFor(Duration.ofSeconds(30), w, n, expected);
      BROKER.restart(); // back, same address and data
      n = writeFor(Duration.ofSeconds(3), w, n, expected);
      Set<String> got = read(expected.size());
      Set<String> missing = new HashSet<>(expected);
      missing.removeAll(got);
      assertEquals(
          0,
          missing.size(),
          missing.size() + " lines lost, e.g. " + missing.stream().limit(5).toList());
      assertTrue(shipper.sent() >= expected.size());
    }
  }

  private static int writeFor(Duration d, BufferedWriter w, int n, Set<String> expected)
      throws Exception {
    for (long end = System.nanoTime() + d.toNanos(); System.nanoTime() < end; ) {
      n = write(w, n, expected);
    }
    return n;
  }

  private static int write(BufferedWriter w, int n, Set<String> expected) throws Exception {
    for (int i = 0; i < 50; i++, n++) {
      String line = "line " + n;
      w.write(line + "\n");
      expected.add(line);
    }
    w.flush();
    Thread.sleep(10); // pacing, part of the scenario: a job writing about 5,000 lines a second
    return n;
  }

  private static Set<String> read(int expected) throws Exception {
    Set<String> out = new HashSet<>();
    for (byte[] b :
        BROKER.readAll(
            Topics.LOGS, expected, Duration.ofSeconds(1), Duration.ofSeconds(90), false)) {
      out.add(WireJson.readLogRecord(b).text());
    }
    return out;
  }
}
