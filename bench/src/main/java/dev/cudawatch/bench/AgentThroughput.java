package dev.cudawatch.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Agent throughput harness (not a test): a broker in its own process, one agent process with {@code
 * -Xmx64m} following a log of N lines, and the agent's CPU time read from the OS. Prints lines/s,
 * CPU cores used, CPU per 10,000 lines/s, and the agent's GC time.
 *
 * <p>Usage: {@code AgentThroughput WORKDIR LINES}; {@code AGENT_JAVA_OPTS} adds JVM options to the
 * agent's command line (a flight recording).
 */
public final class AgentThroughput {
  private AgentThroughput() {}

  public static void main(String[] args) throws Exception {
    Path work = Files.createDirectories(Path.of(args[0]));
    int lines = Integer.parseInt(args[1]);
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String cp = System.getProperty("java.class.path");
    int port = 19092 + (int) (ProcessHandle.current().pid() % 1000);
    Process broker =
        new ProcessBuilder(
                java,
                "-Xmx1g",
                "-cp",
                cp,
                "dev.cudawatch.kafka.embedded.BrokerMain",
                work.resolve("kafka").toString(),
                String.valueOf(port),
                String.valueOf(port + 1))
            .redirectErrorStream(true)
            .start();
    try {
      BufferedReader r =
          new BufferedReader(
              new InputStreamReader(broker.getInputStream(), StandardCharsets.UTF_8));
      String line;
      while ((line = r.readLine()) != null && !line.startsWith("broker ")) {
        // broker start-up chatter
      }
      Path logs = Files.createDirectories(work.resolve("logs"));
      Path log = logs.resolve("train.log");
      Files.writeString(
          log,
          String.join("\n", TrainingLogGenerator.lines(lines, 1000, 7)) + "\n",
          StandardCharsets.UTF_8);
      long bytes = Files.size(log);
      Path config = work.resolve("agent.yaml");
      int http = port + 2;
      Files.writeString(
          config,
          String.join(
              "\n",
              "kafka:",
              "  bootstrap_servers: 127.0.0.1:" + port,
              "files: ['" + logs + "/*.log']",
              "state_dir: " + work.resolve("state"),
              "gpu_sample_interval_ms: 0",
              "http_port: " + http,
              ""));
      long t0 = System.nanoTime();
      List<String> command =
          new ArrayList<>(
              List.of(
                  java,
                  "-Xmx64m",
                  "-XX:+UseSerialGC",
                  "-Xlog:gc:file=" + work.resolve("agent-gc.log")));
      // extra agent JVM options (a profiler: -XX:StartFlightRecording=...), space-separated
      String extra = System.getenv().getOrDefault("AGENT_JAVA_OPTS", "").strip();
      if (!extra.isEmpty()) {
        command.addAll(Arrays.asList(extra.split("\\s+")));
      }
      command.addAll(
          List.of("-cp", cp, "dev.cudawatch.ingest.AgentMain", "--config", config.toString()));
      Process agent =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(work.resolve("agent.out").toFile())
              .start();
      HttpClient client = HttpClient.newHttpClient();
      double sent = 0;
      while (sent < lines) {
        Thread.sleep(100);
        try {
          String m =
              client
                  .send(
                      HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + http + "/metrics"))
                          .timeout(Duration.ofSeconds(2))
                          .build(),
                      HttpResponse.BodyHandlers.ofString())
                  .body();
          for (String l : m.split("\n")) {
            if (l.startsWith("cudawatch_agent_records_sent_total ")) {
              sent = Double.parseDouble(l.substring(l.indexOf(' ') + 1));
            }
          }
        } catch (java.io.IOException e) {
          // not up yet
        }
        if (System.nanoTime() - t0 > Duration.ofMinutes(5).toNanos()) {
          throw new IllegalStateException("agent did not finish in 5 minutes: " + sent + " sent");
        }
      }
      double wall = (System.nanoTime() - t0) / 1e9;
      double cpu = agent.info().totalCpuDuration().map(d -> d.toNanos() / 1e9).orElse(Double.NaN);
      agent.destroy();
      agent.waitFor();
      double gcMs = 0;
      int gcs = 0;
      for (String g : Files.readAllLines(work.resolve("agent-gc.log"))) {
        int ms = g.lastIndexOf("ms");
        int sp = g.lastIndexOf(' ', ms);
        if (ms > 0 && sp > 0 && g.contains("Pause")) {
          gcMs += Double.parseDouble(g.substring(sp + 1, ms));
          gcs++;
        }
      }
      double rate = lines / wall;
      System.out.printf(
          Locale.ROOT,
          "agent: %,d lines (%.1f MB) in %.2f s = %,.0f lines/s, %.1f MB/s; CPU %.2f s = %.2f cores; "
              + "%.3f cores per 10,000 lines/s; GC %d pauses, %.0f ms (%.1f %% of wall), heap -Xmx64m%n",
          lines,
          bytes / 1e6,
          wall,
          rate,
          bytes / 1e6 / wall,
          cpu,
          cpu / wall,
          (cpu / wall) / (rate / 10_000),
          gcs,
          gcMs,
          100 * gcMs / 1000 / wall);
      Files.writeString(
          work.resolve("agent-result.txt"),
          String.format(Locale.ROOT, "%d %.3f %.3f %d %.1f%n", lines, wall, cpu, gcs, gcMs));
    } finally {
      broker.destroy();
      broker.waitFor();
    }
  }
}
