package dev.cudawatch.alerts;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * A real Prometheus (Debian's package) on a free loopback port, scraping one target every second as
 * job {@code cudawatch-alerts}; its data and log live under the given directory.
 */
public final class RealPrometheus implements AutoCloseable {
  private final Process process;
  private final int port;

  private RealPrometheus(Process process, int port) {
    this.process = process;
    this.port = port;
  }

  /** Starts it scraping {@code 127.0.0.1:targetPort} (skipped or failed as RealBinaries says). */
  public static RealPrometheus start(Path dir, int targetPort) throws IOException {
    return start(dir, java.util.Map.of("cudawatch-alerts", targetPort));
  }

  /** Starts it scraping each job's {@code 127.0.0.1:port} every second. */
  public static RealPrometheus start(Path dir, java.util.Map<String, Integer> jobs)
      throws IOException {
    StringBuilder yml = new StringBuilder();
    jobs.forEach(
        (job, target) ->
            yml.append("  - job_name: ")
                .append(job)
                .append("\n    static_configs:\n      - targets: ['127.0.0.1:")
                .append(target)
                .append("']\n"));
    return startWithScrapeConfigs(dir, yml.toString());
  }

  /** Starts it with these {@code scrape_configs} entries (YAML list items), every second. */
  public static RealPrometheus startWithScrapeConfigs(Path dir, String scrapeConfigs)
      throws IOException {
    Path prometheus = RealBinaries.require("prometheus");
    int port = RealBinaries.freePort();
    Path config = dir.resolve("prometheus.yml");
    Files.writeString(config, "global:\n  scrape_interval: 1s\nscrape_configs:\n" + scrapeConfigs);
    Process p =
        new ProcessBuilder(
                prometheus.toString(),
                "--config.file=" + config,
                "--storage.tsdb.path=" + dir.resolve("tsdb"),
                "--web.listen-address=127.0.0.1:" + port)
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("prometheus.log").toFile())
            .start();
    return new RealPrometheus(p, port);
  }

  public String url() {
    return "http://127.0.0.1:" + port;
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  @Override
  public void close() throws InterruptedException {
    process.destroy();
    process.waitFor(10, TimeUnit.SECONDS);
  }
}
