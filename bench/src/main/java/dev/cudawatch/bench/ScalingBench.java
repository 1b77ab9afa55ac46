package dev.cudawatch.bench;

import dev.cudawatch.common.Topics;
import dev.cudawatch.kafka.embedded.EmbeddedKafkaBroker;
import dev.cudawatch.kafka.embedded.TopicReader;
import dev.cudawatch.simulator.SimulateMain;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;
import org.apache.flink.core.execution.JobClient;
import picocli.CommandLine;

/**
 * How cost grows with the fleet (not a test: it measures).
 *
 * <pre>
 *   agent DIR HOSTS...   one agent process (-Xmx64m) follows the simulated logs of HOSTS nodes
 *                        (8 rank logs and a kernel log each): peak RSS and live heap
 *   state DIR HOSTS...   the Flink job's checkpointed state after a simulated fleet of HOSTS nodes
 *                        ran through it: bytes in all, and per stream
 * </pre>
 *
 * Prints one line per size: {@code agent HOSTS FILES LINES RSS_MB HEAP_MB} or {@code state HOSTS
 * STREAMS BYTES BYTES_PER_STREAM}.
 */
public final class ScalingBench {
  private ScalingBench() {}

  public static void main(String[] args) throws Exception {
    Path dir = Files.createDirectories(Path.of(args[1]));
    for (int i = 2; i < args.length; i++) {
      int hosts = Integer.parseInt(args[i]);
      if (args[0].equals("agent")) {
        agent(dir.resolve("agent-" + hosts), hosts);
      } else {
        state(dir.resolve("state-" + hosts), hosts);
      }
    }
    System.exit(0);
  }

  static void agent(Path work, int hosts) throws Exception {
    Path logs = work.resolve("fleet");
    simulate(
        "--out",
        logs.toString(),
        "--hosts",
        String.valueOf(hosts),
        "--seconds",
        "60",
        "--rate",
        String.valueOf(250 * hosts),
        "--no-health-scenarios");
    List<Path> files;
    try (Stream<Path> s = Files.walk(logs)) {
      files = s.filter(p -> p.toString().endsWith(".log")).toList();
    }
    long lines = 0;
    for (Path f : files) {
      for (byte b : Files.readAllBytes(f)) {
        lines += b == '\n' ? 1 : 0; // records are \n-terminated; a \r redraw stays in its line
      }
    }
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start(work.resolve("kafka"))) {
      broker.createTopics(Topics.ALL, 2);
      int http = EmbeddedKafkaBroker.freePort();
      Path config = work.resolve("agent.yaml");
      Files.writeString(
          config,
          String.join(
              "\n",
              "kafka:",
              "  bootstrap_servers: " + broker.bootstrapServers(),
              "files: ['" + logs + "/**/*.log']",
              "state_dir: " + work.resolve("state"),
              "gpu_sample_interval_ms: 0",
              "http_port: " + http,
              ""));
      Process agent =
          new ProcessBuilder(
                  java,
                  "-Xmx64m",
                  "-XX:+UseSerialGC",
                  "-Xlog:gc:file=" + work.resolve("gc.log"),
                  "-cp",
                  System.getProperty("java.class.path"),
                  "dev.cudawatch.ingest.AgentMain",
                  "--config",
                  config.toString())
              .redirectErrorStream(true)
              .redirectOutput(work.resolve("agent.out").toFile())
              .start();
      try {
        long deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
        while (sent(http) < lines) {
          if (System.nanoTime() > deadline) {
            throw new IllegalStateException("the agent did not ship " + lines + " lines in 5 min");
          }
          Thread.sleep(200); // polling the agent's metrics
        }
        long rssKb = 0;
        for (String l : Files.readAllLines(Path.of("/proc/" + agent.pid() + "/status"))) {
          if (l.startsWith("VmHWM:")) {
            rssKb = Long.parseLong(l.replaceAll("\\D", ""));
          }
        }
        System.out.printf(
            Locale.ROOT,
            "agent %d %d %d %.1f %.1f%n",
            hosts,
            files.size(),
            lines,
            rssKb / 1024.0,
            liveHeapMb(work.resolve("gc.log")));
      } finally {
        agent.destroy();
        agent.waitFor();
      }
    }
  }

  private static double sent(int port) {
    try {
      String m =
          HttpClient.newHttpClient()
              .send(
                  HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"))
                      .build(),
                  HttpResponse.BodyHandlers.ofString())
              .body();
      for (String l : m.split("\n")) {
        if (l.startsWith("cudawatch_agent_records_sent_total ")) {
          return Double.parseDouble(l.substring(l.indexOf(' ') + 1));
        }
      }
    } catch (IOException | InterruptedException e) {
      // not up yet
    }
    return 0;
  }

  /** The heap left after the last collection, from a -Xlog:gc file ("12M->3M(61M)"). */
  private static double liveHeapMb(Path gcLog) throws IOException {
    double last = 0;
    for (String l : Files.readAllLines(gcLog)) {
      var m = java.util.regex.Pattern.compile("(\\d+)M->(\\d+)M\\(").matcher(l);
      if (m.find()) {
        last = Double.parseDouble(m.group(2));
      }
    }
    return last;
  }

  static void state(Path work, int hosts) throws Exception {
    try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start(work.resolve("kafka"))) {
      broker.createTopics(Topics.ALL, 2);
      Path checkpoints = work.resolve("checkpoints");
      JobClient job = BenchJob.start(broker.bootstrapServers(), "state", checkpoints);
      simulate(
          "--bootstrap-servers",
          broker.bootstrapServers(),
          "--hosts",
          String.valueOf(hosts),
          "--seconds",
          "120",
          "--rate",
          String.valueOf(250 * hosts),
          "--no-health-scenarios",
          "--start",
          Instant.now().minusSeconds(120).toString(),
          "--truth",
          work.resolve("truth.jsonl").toString());
      // caught up once the incidents topic is quiet; then two more checkpoints
      TopicReader.readUntil(
          broker.bootstrapServers(),
          Topics.INCIDENTS,
          got -> !got.isEmpty(),
          Duration.ofSeconds(10),
          Duration.ofMinutes(5),
          true);
      int before = newest(checkpoints).map(ScalingBench::number).orElse(0);
      long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
      while (newest(checkpoints).map(ScalingBench::number).orElse(0) < before + 2
          && System.nanoTime() < deadline) {
        Thread.sleep(200); // polling the checkpoint directory
      }
      long bytes = size(newest(checkpoints).orElseThrow());
      job.cancel().get();
      int streams = hosts * 8;
      System.out.printf(
          Locale.ROOT, "state %d %d %d %.0f%n", hosts, streams, bytes, bytes / (double) streams);
    }
  }

  private static java.util.Optional<Path> newest(Path checkpoints) throws IOException {
    if (!Files.isDirectory(checkpoints)) {
      return java.util.Optional.empty();
    }
    try (Stream<Path> s = Files.walk(checkpoints, 2)) {
      return s.filter(p -> p.getFileName().toString().startsWith("chk-"))
          .filter(p -> Files.exists(p.resolve("_metadata")))
          .max(Comparator.comparingInt(ScalingBench::number));
    }
  }

  private static int number(Path chk) {
    return Integer.parseInt(chk.getFileName().toString().substring(4));
  }

  private static long size(Path dir) throws IOException {
    List<Path> files = new ArrayList<>();
    try (Stream<Path> s = Files.walk(dir)) {
      s.filter(Files::isRegularFile).forEach(files::add);
    }
    long n = 0;
    for (Path f : files) {
      n += Files.size(f);
    }
    return n;
  }

  private static void simulate(String... args) {
    int code = new CommandLine(new SimulateMain()).execute(args);
    if (code != 0) {
      throw new IllegalStateException("simulate exited with " + code);
    }
  }
}
