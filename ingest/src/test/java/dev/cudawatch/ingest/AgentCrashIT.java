package dev.cudawatch.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.Topics;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.kafka.embedded.EmbeddedKafkaBroker;
import dev.cudawatch.kafka.embedded.KafkaBrokerExtension;
import dev.cudawatch.kafka.embedded.TopicReader;
import java.io.BufferedWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent runs as its own process and is killed with SIGKILL ten times while 200,000 lines are
 * written to four files that rotate by rename and by copytruncate. Every line must arrive, and
 * exactly once after dropping duplicates by record id.
 */
class AgentCrashIT {
  @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();

  private static final int FILES = 4;
  private static final int LINES = 200_000;
  private static final int ROTATE_EVERY = 10_000;

  @TempDir Path dir;

  @Test
  void sigkillTenTimesDuringRotationLosesNothing() throws Exception {
    EmbeddedKafkaBroker broker = KAFKA.broker();
    broker.createTopics(Topics.ALL, 2);
    Path logs = Files.createDirectories(dir.resolve("logs"));
    Path config = dir.resolve("agent.yaml");
    Files.writeString(
        config,
        String.join(
            "\n",
            "kafka:",
            "  bootstrap_servers: " + broker.bootstrapServers(),
            "host: crash-test",
            "files: ['" + logs + "/*.log*']",
            "state_dir: " + dir.resolve("state"),
            "poll_interval_ms: 20",
            "checkpoint_interval_ms: 100",
            "gpu_sample_interval_ms: 0",
            "http_port: -1",
            ""));

    Random random = new Random(7);
    Process agent = startAgent(config);
    int kills = 0;
    BufferedWriter[] out = new BufferedWriter[FILES];
    int[] rotations = new int[FILES];
    for (int f = 0; f < FILES; f++) {
      out[f] = Files.newBufferedWriter(logs.resolve("f" + f + ".log"), StandardCharsets.UTF_8);
    }
    long nextKill = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300 + random.nextInt(700));
    for (int i = 0; i < LINES; i++) {
      int f = i % FILES;
      int n = i / FILES;
      out[f].write("f" + f + " line " + n + " " + "x".repeat(random.nextInt(60)) + "\n");
      if (n > 0 && n % ROTATE_EVERY == 0 && f == n / ROTATE_EVERY % FILES) {
        out[f].close();
        Path live = logs.resolve("f" + f + ".log");
        Path old = logs.resolve("f" + f + ".log." + (++rotations[f]));
        if (rotations[f] % 2 == 1) {
          Files.move(live, old); // rename rotation
        } else {
          Files.copy(live, old, StandardCopyOption.REPLACE_EXISTING); // copytruncate
          Files.write(live, new byte[0], StandardOpenOption.TRUNCATE_EXISTING);
        }
        out[f] =
            Files.newBufferedWriter(
                live, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
      }
      if (i % 200 == 0) {
        for (BufferedWriter w : out) {
          w.flush();
        }
        Thread.sleep(12); // pacing, part of the scenario: ~15,000 lines/s, so kills land mid-stream
      }
      if (kills < 10 && System.nanoTime() > nextKill) {
        agent.destroyForcibly().waitFor(); // SIGKILL: no shutdown hook, no flush
        kills++;
        agent = startAgent(config);
        nextKill = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300 + random.nextInt(700));
      }
    }
    for (BufferedWriter w : out) {
      w.close();
    }
    assertEquals(10, kills, "the writer ran long enough for ten kills");

    Set<String> expected = new HashSet<>();
    for (int i = 0; i < LINES; i++) {
      expected.add("f" + i % FILES + " line " + i / FILES);
    }
    Map<String, Integer> seen = readUntil(broker, expected.size(), Duration.ofSeconds(120));
    agent.destroy(); // SIGTERM: graceful
    assertTrue(agent.waitFor(30, TimeUnit.SECONDS));
    Set<String> missing = new HashSet<>(expected);
    missing.removeAll(seen.keySet());
    if (!missing.isEmpty()) {
      Map<Integer, java.util.TreeSet<Integer>> byFile = new java.util.TreeMap<>();
      for (String m : missing) {
        String[] w = m.split(" ");
        byFile
            .computeIfAbsent(Integer.parseInt(w[0].substring(1)), k -> new java.util.TreeSet<>())
            .add(Integer.parseInt(w[2]));
      }
      byFile.forEach(
          (k, v) ->
              System.err.println(
                  "MISSING f" + k + ": " + v.size() + " from " + v.first() + " to " + v.last()));
      System.err.println(
          "AGENT LOG: "
              + Files.readString(config.resolveSibling("agent.out")).lines().limit(40).toList());
    }
    assertEquals(
        Set.of(),
        missing.size() > 10
            ? Set.of(
                missing.size()
                    + " lines missing, e.g. "
                    + new java.util.TreeSet<>(missing)
                        .headSet(new java.util.TreeSet<>(missing).first() + "~"))
            : missing);
    for (var e : seen.entrySet()) {
      assertEquals(
          1, e.getValue(), "after dropping duplicates by id, '" + e.getKey() + "' arrived once");
    }
    assertEquals(expected, seen.keySet());
  }

  /** The agent process started last: killed after the test, even one that failed midway. */
  private Process last;

  @AfterEach
  void killTheAgent() throws InterruptedException {
    if (last != null && last.isAlive()) {
      last.destroyForcibly().waitFor();
    }
  }

  private Process startAgent(Path config) throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    last = startProcess(java, config);
    return last;
  }

  private static Process startProcess(String java, Path config) throws Exception {
    return new ProcessBuilder(
            java,
            "-Xmx128m",
            // the suite's run-spool root: the agent adopts no spool another program left
            "-Dcudawatch.run_spool_root="
                + System.getProperty("cudawatch.run_spool_root", "/var/tmp"),
            "-XX:+UseSerialGC",
            "-cp",
            System.getProperty("java.class.path"),
            AgentMain.class.getName(),
            "--config",
            config.toString())
        .redirectErrorStream(true)
        .redirectOutput(
            ProcessBuilder.Redirect.appendTo(config.resolveSibling("agent.out").toFile()))
        .start();
  }

  /** Distinct record ids per line text, read until every expected line is there. */
  private static Map<String, Integer> readUntil(
      EmbeddedKafkaBroker broker, int expected, Duration timeout) throws Exception {
    Map<String, String> textById = new HashMap<>();
    for (byte[] b :
        TopicReader.readAll(
            broker.bootstrapServers(),
            Topics.LOGS,
            expected,
            Duration.ofSeconds(3),
            timeout,
            false)) {
      LogRecord rec = WireJson.readLogRecord(b);
      if (rec.kind() == RecordKind.QUIET) {
        continue; // a file's writer paused: no line
      }
      textById.put(rec.id(), rec.text().substring(0, rec.text().lastIndexOf(' ')));
    }
    Map<String, Integer> perText = new HashMap<>();
    textById.values().forEach(t -> perText.merge(t, 1, Integer::sum));
    return perText;
  }
}
