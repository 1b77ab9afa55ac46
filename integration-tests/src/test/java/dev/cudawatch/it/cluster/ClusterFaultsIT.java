package dev.cudawatch.it.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.cudawatch.common.Topics;
import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.testkit.Await;
import java.io.File;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * deploy/cluster/ for real: 3 Kafka brokers (KRaft, replication 3, min.insync.replicas 2), a Flink
 * JobManager and 2 TaskManagers as separate JVMs with deploy/flink/config.yaml, the job submitted
 * with `bin/cudawatch processor --submit`, the alerts service and two agents, started by
 * cluster.sh. While training logs that end in a real CUDA OOM are written on both nodes, the test
 * kills -9 the TaskManager that runs the job and later one Kafka broker. Afterwards every alert is
 * on cudawatch.alerts exactly once for a read_committed reader, and every line written is on
 * cudawatch.logs. Slow (minutes): it runs with -Pcluster (system property cudawatch.cluster).
 */
class ClusterFaultsIT {
  private static final Path REPO = Path.of("..").toAbsolutePath().normalize();
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int JOBS = 30;
  private static final int PROGRESS_LINES = 20;

  @TempDir Path work;
  private final HttpClient http = HttpClient.newHttpClient();
  private Map<String, String> env;
  private final List<String> report = new ArrayList<>();

  @Test
  void killATaskManagerAndABrokerWhileJobsFailEveryAlertOnceAndNoLineLost() throws Exception {
    assumeTrue(
        Boolean.getBoolean("cudawatch.cluster"),
        "the multi-process cluster test runs with -Pcluster (-Dcudawatch.cluster=true)");
    Path oom = REPO.resolve("../shared/corpus/real/oom_single.log").normalize();
    if (!Files.exists(oom)) {
      oom = REPO.resolve("diagnosis/src/test/resources/golden/oom_single.log");
    }
    List<String> traceback = Files.readAllLines(oom);
    long t0 = System.nanoTime();
    try {
      String out = script(600, "start", work.toString());
      assertTrue(out.contains("submitted job"), out);
      report.add(
          row(
              "processes started",
              "9 (kafka-1..3, jobmanager, taskmanager-1..2, alerts, agent-a, agent-b) in "
                  + secs(t0)
                  + " s"));
      env = readEnv(work.resolve("cluster.env"));
      String rest = "http://127.0.0.1:" + env.get("FLINK_REST_PORT");
      String job = get(rest + "/jobs").path("jobs").get(0).path("id").asText();
      await(() -> completedCheckpoints(rest, job) >= 1, 300, "the job's first checkpoint");

      // the workload: JOBS training jobs on two nodes, each some progress lines and then an OOM
      Map<String, List<String>> written = new ConcurrentHashMap<>();
      Set<String> failingFiles = ConcurrentHashMap.newKeySet();
      long w0 = System.nanoTime();
      Thread writer =
          new Thread(
              () -> {
                try {
                  for (int i = 0; i < JOBS; i++) {
                    String node = i % 2 == 0 ? "node-a" : "node-b";
                    Path f = work.resolve("logs/" + node + "/job-" + i + ".log");
                    List<String> lines = new ArrayList<>();
                    for (int s = 0; s < PROGRESS_LINES; s++) {
                      lines.add("job " + i + " step " + s + " loss " + (1.0 / (s + 1)));
                    }
                    lines.addAll(traceback);
                    for (String line : lines) {
                      Files.writeString(
                          f, line + "\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND);
                      Thread.sleep(
                          100); // pacing, part of the scenario: lines arrive while faults land
                    }
                    written.put(node + ":" + f, lines);
                    failingFiles.add(f.toString());
                  }
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
              },
              "log-writer");
      writer.start();

      // fault 1: kill -9 the TaskManager that runs the job; Flink restores on the other one
      await(() -> failingFiles.size() >= JOBS / 4, 300, "a quarter of the jobs written");
      String busy = busyTaskManager(rest);
      long restoredBefore =
          get(rest + "/jobs/" + job + "/checkpoints").path("counts").path("restored").asLong();
      long k1 = kill9(busy);
      report.add(
          row(
              "fault 1",
              "kill -9 "
                  + busy
                  + " (running the job) at +"
                  + secsSince(w0, k1)
                  + " s of the workload"));
      long cp1 = latestCompletedId(rest, job);
      await(
          () ->
              get(rest + "/jobs/" + job + "/checkpoints").path("counts").path("restored").asLong()
                      > restoredBefore
                  && latestCompletedId(rest, job) > cp1 + 1,
          300,
          "the job to restore from its checkpoint and complete a new one");
      JsonNode restored =
          get(rest + "/jobs/" + job + "/checkpoints").path("latest").path("restored");
      String recover1 = secs(k1);
      report.add(
          row(
              "",
              "restored from checkpoint "
                  + restored.path("id").asText()
                  + " on the other TaskManager; recovered (a new checkpoint completed) in "
                  + recover1
                  + " s; "
                  + busy
                  + " restarted"));
      script(120, "restart", work.toString(), busy);

      // fault 2: kill -9 one broker (of 3; min.insync.replicas 2 keeps every topic writable)
      await(() -> failingFiles.size() >= JOBS * 2 / 3, 300, "two thirds of the jobs written");
      long cp2 = latestCompletedId(rest, job);
      long restoredBefore2 =
          get(rest + "/jobs/" + job + "/checkpoints").path("counts").path("restored").asLong();
      long k2 = kill9("kafka-2");
      report.add(row("fault 2", "kill -9 kafka-2 at +" + secsSince(w0, k2) + " s of the workload"));
      await(() -> latestCompletedId(rest, job) > cp2 + 1, 300, "a checkpoint without kafka-2");
      String recover2 = secs(k2);
      long restarts2 =
          get(rest + "/jobs/" + job + "/checkpoints").path("counts").path("restored").asLong()
              - restoredBefore2;
      report.add(
          row(
              "",
              "recovered (a new checkpoint completed with 2 brokers) in "
                  + recover2
                  + " s; the job "
                  + (restarts2 > 0
                      ? "restored from a checkpoint " + restarts2 + " time(s)"
                      : "kept running")
                  + "; kafka-2 restarted"));
      script(120, "restart", work.toString(), "kafka-2");

      writer.join(TimeUnit.MINUTES.toMillis(10));
      assertEquals(JOBS, failingFiles.size(), "the writer stopped early");
      long lines = written.values().stream().mapToLong(List::size).sum();
      report.add(
          row(
              "records written",
              lines + " log lines in " + JOBS + " files on 2 nodes, " + JOBS + " failing jobs"));

      // every failure's alert, once, for a read_committed reader
      String bootstrap = env.get("BOOTSTRAP");
      List<Alert> alerts = new ArrayList<>();
      try (KafkaConsumer<byte[], byte[]> c = consumer(bootstrap, Topics.ALERTS, true)) {
        await(
            () -> {
              poll(c, alerts, Alert.class);
              return gpuJobFailureSources(alerts).containsAll(failingFiles);
            },
            300,
            "an alert for every failing job");
        // a few more checkpoints: nothing late may repeat one
        long cp3 = latestCompletedId(rest, job);
        await(() -> latestCompletedId(rest, job) > cp3 + 3, 120, "three more checkpoints");
        poll(c, alerts, Alert.class);
      }
      Map<String, Integer> perSource = new TreeMap<>();
      Map<List<Object>, Integer> identical = new HashMap<>();
      Map<String, Integer> byName = new TreeMap<>();
      for (Alert a : alerts) {
        byName.merge(a.labels().get("alertname"), 1, Integer::sum);
        identical.merge(
            List.of(
                a.fingerprint(),
                a.state(),
                String.valueOf(a.startsAt()),
                String.valueOf(a.endsAt())),
            1,
            Integer::sum);
        if ("GpuJobFailure".equals(a.labels().get("alertname"))) {
          perSource.merge(source(a), 1, Integer::sum);
        }
      }
      int duplicates = identical.values().stream().mapToInt(n -> n - 1).sum();
      int gpuDuplicates = perSource.values().stream().mapToInt(n -> n - 1).sum();
      report.add(
          row(
              "alerts expected/found",
              "GpuJobFailure "
                  + JOBS
                  + "/"
                  + perSource.size()
                  + " (one per failing job); all alert records by name: "
                  + byName));
      report.add(row("duplicates", String.valueOf(duplicates + gpuDuplicates)));

      // every line written reached cudawatch.logs (the agents are at-least-once: repeats are fine)
      Map<String, Set<String>> seen = new HashMap<>();
      List<LogRecord> records = new ArrayList<>();
      long lost;
      try (KafkaConsumer<byte[], byte[]> c = consumer(bootstrap, Topics.LOGS, false)) {
        BooleanSupplier complete =
            () -> {
              List<LogRecord> fresh = new ArrayList<>();
              poll(c, fresh, LogRecord.class);
              for (LogRecord r : fresh) {
                seen.computeIfAbsent(r.host() + ":" + r.source(), k -> new HashSet<>())
                    .add(r.text());
              }
              records.addAll(fresh);
              return missing(written, seen) == 0;
            };
        try {
          await(complete, 120, "every line on " + Topics.LOGS);
        } catch (AssertionError e) {
          // counted and reported below
        }
        lost = missing(written, seen);
      }
      report.add(row("lines lost", String.valueOf(lost)));
      report.add(
          row(
              "time to recover",
              "TaskManager "
                  + recover1
                  + " s, broker "
                  + recover2
                  + " s (from kill -9 until a new checkpoint completed)"));
      assertEquals(JOBS, perSource.size(), "alerts for " + perSource.keySet());
      assertEquals(0, duplicates, "identical alert records: " + alerts.size());
      assertEquals(0, gpuDuplicates, "GpuJobFailure alerts per job: " + perSource);
      assertEquals(0, lost, "lines lost");
    } finally {
      System.out.println("\ncluster test (deploy/cluster/cluster.sh, one machine)");
      report.forEach(System.out::println);
      System.out.println();
      script(180, "stop", work.toString());
    }
  }

  private static long missing(Map<String, List<String>> written, Map<String, Set<String>> seen) {
    long n = 0;
    for (var e : written.entrySet()) {
      Set<String> got = seen.getOrDefault(e.getKey(), Set.of());
      for (String line : e.getValue()) {
        if (!got.contains(line)) {
          n++;
        }
      }
    }
    return n;
  }

  private static Set<String> gpuJobFailureSources(List<Alert> alerts) {
    Set<String> out = new HashSet<>();
    for (Alert a : alerts) {
      if ("GpuJobFailure".equals(a.labels().get("alertname"))) {
        out.add(source(a));
      }
    }
    return out;
  }

  /** The failing file of a GpuJobFailure alert (its source annotation is PATH:LINE). */
  private static String source(Alert a) {
    String s = a.annotations().getOrDefault("source", "");
    int colon = s.lastIndexOf(':');
    return colon > 0 ? s.substring(0, colon) : s;
  }

  private String busyTaskManager(String rest) {
    for (JsonNode tm : get(rest + "/taskmanagers").path("taskmanagers")) {
      if (tm.path("freeSlots").asInt() < tm.path("slotsNumber").asInt()) {
        return tm.path("id").asText();
      }
    }
    throw new AssertionError("no TaskManager runs the job");
  }

  private long kill9(String name) throws Exception {
    long pid = Long.parseLong(Files.readString(work.resolve("pids/" + name + ".pid")).strip());
    ProcessHandle h =
        ProcessHandle.of(pid).orElseThrow(() -> new AssertionError(name + " is not running"));
    long at = System.nanoTime();
    new ProcessBuilder("kill", "-KILL", Long.toString(pid)).start().waitFor();
    h.onExit().get(30, TimeUnit.SECONDS);
    return at;
  }

  private long completedCheckpoints(String rest, String job) {
    return get(rest + "/jobs/" + job + "/checkpoints").path("counts").path("completed").asLong();
  }

  private long latestCompletedId(String rest, String job) {
    return get(rest + "/jobs/" + job + "/checkpoints")
        .path("latest")
        .path("completed")
        .path("id")
        .asLong(-1);
  }

  private JsonNode get(String url) {
    try {
      HttpResponse<String> r =
          http.send(
              HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
              HttpResponse.BodyHandlers.ofString());
      return JSON.readTree(r.body());
    } catch (Exception e) {
      return JSON.createObjectNode();
    }
  }

  private static KafkaConsumer<byte[], byte[]> consumer(
      String bootstrap, String topic, boolean committedOnly) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(
        ConsumerConfig.ISOLATION_LEVEL_CONFIG,
        committedOnly ? "read_committed" : "read_uncommitted");
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    KafkaConsumer<byte[], byte[]> c =
        new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    List<TopicPartition> parts = new ArrayList<>();
    c.partitionsFor(topic).forEach(i -> parts.add(new TopicPartition(topic, i.partition())));
    c.assign(parts);
    c.seekToBeginning(parts);
    return c;
  }

  private static <T> void poll(KafkaConsumer<byte[], byte[]> c, List<T> into, Class<T> type) {
    for (var r : c.poll(Duration.ofMillis(500))) {
      try {
        into.add(WireJson.read(r.value(), type));
      } catch (Exception e) {
        throw new AssertionError("unreadable record on " + r.topic(), e);
      }
    }
  }

  private String script(long seconds, String... args) throws Exception {
    List<String> cmd =
        new ArrayList<>(List.of("bash", REPO.resolve("deploy/cluster/cluster.sh").toString()));
    cmd.addAll(List.of(args));
    Process p =
        new ProcessBuilder(cmd)
            .redirectErrorStream(true)
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
            .start();
    var out = new java.io.ByteArrayOutputStream();
    Thread reader =
        new Thread(
            () -> {
              try {
                p.getInputStream().transferTo(out);
              } catch (java.io.IOException ignored) {
                // ended
              }
            });
    reader.start();
    if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      fail("cluster.sh " + String.join(" ", args) + " did not finish in " + seconds + " s\n" + out);
    }
    reader.join();
    String text = out.toString(StandardCharsets.UTF_8);
    assertEquals(0, p.exitValue(), "cluster.sh " + String.join(" ", args) + "\n" + text);
    return text;
  }

  private static Map<String, String> readEnv(Path f) throws Exception {
    Map<String, String> out = new LinkedHashMap<>();
    for (String line : Files.readAllLines(f)) {
      int eq = line.indexOf('=');
      if (eq > 0) {
        out.put(line.substring(0, eq), line.substring(eq + 1));
      }
    }
    return out;
  }

  private static String row(String what, String value) {
    return String.format("  %-22s %s", what, value);
  }

  private static String secs(long since) {
    return String.format("%.1f", (System.nanoTime() - since) / 1e9);
  }

  private static String secsSince(long from, long at) {
    return String.format("%.1f", (at - from) / 1e9);
  }

  /** Waits for the state a step asserts. */
  private static void await(BooleanSupplier ok, long seconds, String what) {
    Await.until(what, ok, java.time.Duration.ofSeconds(seconds));
  }
}
