package dev.cudawatch.launcher;

import dev.cudawatch.common.cli.Cli;
import dev.cudawatch.common.cli.LogOptions;
import dev.cudawatch.common.cli.Logging;
import dev.cudawatch.common.config.ConfigException;
import dev.cudawatch.common.config.Validated;
import dev.cudawatch.common.http.DefaultPorts;
import dev.cudawatch.common.http.WebConfig;
import dev.cudawatch.diagnosis.catalog.CatalogLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code cudawatch local}: the whole pipeline on one machine, with no external services. */
@Command(
    name = "local",
    description = {
      "Run everything in one process: an embedded Kafka broker, the Flink job on a local MiniCluster,",
      "the alerts server and the agent following a directory of training logs."
    })
public final class LocalMain implements Callable<Integer> {
  @CommandLine.Mixin LogOptions logOptions;

  @Option(
      names = "--data-dir",
      paramLabel = "DIR",
      description = "broker data and agent state (default: a new temporary directory)")
  Path dataDir;

  @Option(
      names = "--logs",
      paramLabel = "DIR",
      defaultValue = "logs",
      description =
          "training logs to follow, *.log (default: ${DEFAULT-VALUE}; created if missing)")
  Path logs;

  @Option(
      names = "--replay",
      paramLabel = "DIR",
      description = "first ship every file of DIR once (e.g. samples)")
  Path replay;

  @Option(
      names = "--http-port",
      defaultValue = "" + DefaultPorts.ALERTS_HTTP,
      description = "port of /metrics, /api and /healthz on 127.0.0.1 (default: ${DEFAULT-VALUE})")
  int httpPort;

  @Option(
      names = "--parallelism",
      defaultValue = "2",
      description = "Flink parallelism (default: ${DEFAULT-VALUE})")
  int parallelism;

  @Option(
      names = "--alertmanager",
      paramLabel = "URL",
      description = "Alertmanager to push alerts to")
  String alertmanager;

  @Option(
      names = "--webhook",
      paramLabel = "URL",
      description = "webhook receiver for alerts (Alertmanager's webhook payload, version 4)")
  String webhook;

  @Option(names = "--slack", paramLabel = "URL", description = "Slack incoming-webhook URL")
  String slack;

  @Option(
      names = "--catalog",
      paramLabel = "FILE",
      description = "extra signature catalog; may be repeated")
  List<String> catalogs = new ArrayList<>();

  @Option(
      names = "--kernel-log",
      paramLabel = "FILE",
      description = "follow this kernel log (dmesg or a recorded one) instead of /dev/kmsg")
  Path kernelLog;

  @Option(names = "--no-kernel-log", description = "do not read the kernel log")
  boolean noKernelLog;

  @Option(
      names = "--gpu-samples",
      paramLabel = "FILE",
      description = "replay recorded nvidia-smi samples at their pace instead of sampling")
  Path gpuSamples;

  @Option(names = "--no-gpu-samples", description = "do not sample GPU memory with nvidia-smi")
  boolean noGpuSamples;

  @Option(
      names = "--web-config",
      paramLabel = "FILE",
      description =
          "TLS and basic auth of the HTTP port: a web-config file in the format of Prometheus"
              + " exporters (tls_server_config, basic_auth_users), the alerts service's"
              + " web_config_file")
  Path webConfig;

  public static void main(String[] args) {
    Cli.main(new LocalMain(), args);
  }

  @Override
  public Integer call() throws Exception {
    WebConfig web;
    try {
      Validated.httpUrl(alertmanager, "--alertmanager");
      Validated.httpUrl(webhook, "--webhook");
      Validated.httpUrl(slack, "--slack");
      // a bad web-config fails now, naming its key or file, before anything starts
      web = webConfig == null ? null : WebConfig.load(webConfig.toString());
    } catch (ConfigException e) {
      System.err.println("cudawatch local: " + e.getMessage());
      return 2;
    }
    // a bad catalog fails now, with its file and line, before anything starts
    new CatalogLoader().load(catalogs.stream().map(Path::of).toList());
    if (replay != null && !Files.isDirectory(replay)) {
      System.err.println("cudawatch local: --replay " + replay + " is not a directory");
      return 2;
    }
    for (Path f : new Path[] {kernelLog, gpuSamples}) {
      if (f != null && !Files.isReadable(f)) {
        System.err.println("cudawatch local: " + f + " is not a readable file");
        return 2;
      }
    }
    NodeSources sources =
        NodeSources.detect(
            noKernelLog, kernelLog, noGpuSamples, gpuSamples, "/dev/kmsg", System.getenv("PATH"));
    Path data = dataDir != null ? dataDir : Files.createTempDirectory("cudawatch-local-");
    LocalCluster cluster =
        new LocalCluster(
                new LocalCluster.Options(
                    data,
                    logs,
                    replay,
                    httpPort,
                    parallelism,
                    alertmanager,
                    webhook,
                    slack,
                    catalogs),
                System.out)
            .withNodeSources(sources)
            .withAlertsSettings(
                a ->
                    webConfig == null
                        ? a
                        : a.toBuilder()
                            .webConfigFile(webConfig.toAbsolutePath().toString())
                            .build());
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  System.out.println("cudawatch local: stopping");
                  // Flink's and Kafka's parts then warn about each other having stopped first
                  Logging.librariesErrorsOnly();
                  cluster.close();
                  stopped.countDown();
                },
                "cudawatch-shutdown"));
    try {
      cluster.start();
    } catch (java.net.BindException e) {
      System.err.println(
          "cudawatch local: port " + httpPort + " is in use; choose another with --http-port");
      return 2;
    }
    String base =
        (web != null && web.tls() != null ? "https" : "http")
            + "://127.0.0.1:"
            + cluster.httpPort();
    System.out.println("cudawatch local: running");
    System.out.println("  Kafka         " + cluster.bootstrapServers() + " (data in " + data + ")");
    System.out.println("  metrics       " + base + "/metrics");
    System.out.println("  incidents     " + base + "/api/incidents");
    System.out.println("  alerts        " + base + "/api/alerts");
    System.out.println("  health        " + base + "/healthz");
    System.out.println("  following     " + logs.toAbsolutePath() + "/*.log");
    System.out.println("  kernel log    " + sources.kernelWhy());
    System.out.println("  GPU memory    " + sources.gpuWhy());
    System.out.println("Press Ctrl-C to stop.");
    stopped.await();
    return 0;
  }
}
