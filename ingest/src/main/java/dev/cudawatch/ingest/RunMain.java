package dev.cudawatch.ingest;

import dev.cudawatch.common.cli.Cli;
import dev.cudawatch.common.cli.LogOptions;
import dev.cudawatch.common.cli.VersionProvider;
import dev.cudawatch.common.config.ConfigLoader;
import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.ingest.attribution.GpuInventory;
import dev.cudawatch.ingest.attribution.RunAttribution;
import dev.cudawatch.ingest.run.ChildProcess;
import dev.cudawatch.ingest.run.ExitStatus;
import dev.cudawatch.ingest.run.RunRecords;
import dev.cudawatch.ingest.run.RunShipping;
import dev.cudawatch.ingest.run.SignalForwarding;
import dev.cudawatch.ingest.streams.StreamPump;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code cudawatch run [--job ID] -- CMD ARGS...}: runs a training command, passes its output
 * through unchanged, ships both streams and the exit status, and exits with the command's status.
 * Lines go first to a disk spool, so the job never waits for Kafka; what cannot be shipped before
 * the command ends stays spooled, and the node's agent ships it once Kafka is reachable.
 */
@Command(
    name = "run",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    description = "Run a training command and ship its output to Kafka.")
public final class RunMain implements Callable<Integer> {
  @CommandLine.Mixin LogOptions logOptions;

  @Option(
      names = "--job",
      paramLabel = "ID",
      description = "job id (default: SLURM_JOB_ID, TORCHELASTIC_RUN_ID, pod name)")
  String job;

  @Option(
      names = "--config",
      paramLabel = "FILE",
      description = "agent YAML configuration (kafka, state_dir)")
  Path config;

  @Option(
      names = "--bootstrap-servers",
      paramLabel = "HOST:PORT",
      description = "overrides kafka.bootstrap_servers")
  String bootstrap;

  @Option(
      names = "--drain-seconds",
      defaultValue = "10",
      description = "how long to wait after the command for shipping (default: ${DEFAULT-VALUE})")
  int drainSeconds;

  /** One id per run: the stream id of its records and the name of its spool. */
  private final String runId = UUID.randomUUID().toString();

  @Parameters(
      arity = "1..*",
      paramLabel = "CMD",
      description = "the command and its arguments (after --)")
  List<String> command = new ArrayList<>();

  public static void main(String[] args) {
    CommandLine cl = Cli.commandLine(new RunMain());
    cl.setStopAtPositional(true);
    System.exit(cl.execute(args));
  }

  @Override
  public Integer call() throws Exception {
    // Nothing before the child starts may stop it from starting: a bad configuration is
    // reported and the job runs unwatched (its output still passes through).
    AgentSettings s;
    try {
      s = new ConfigLoader("CUDAWATCH_AGENT", System.getenv()).load(config, AgentSettings.class);
    } catch (Exception | LinkageError e) {
      System.err.println("cudawatch run: " + e.getMessage() + "; the job runs without shipping");
      s = null;
    }
    ChildProcess child;
    try {
      child = ChildProcess.start(command);
    } catch (IOException e) {
      System.err.println("cudawatch run: " + e.getMessage());
      return 127;
    }
    try (SignalForwarding signals = SignalForwarding.to(child);
        RunShipping shipping = s == null ? null : openShipping(s)) {
      Map<String, String> env = System.getenv();
      AgentSettings settings = s == null ? AgentSettings.defaults() : s;
      // after the child started: asking nvidia-smi must never delay the job
      GpuInventory inventory =
          RunAttribution.wantsInventory(env)
              ? GpuInventory.query(settings.nvidiaSmi())
              : GpuInventory.empty();
      RunAttribution who = RunAttribution.of(env, job, s != null ? s.job() : null, inventory);
      if (who.job() == null) {
        who =
            RunAttribution.of(
                env, "run-" + UUID.randomUUID().toString().substring(0, 8), null, inventory);
        who.attribution().put("job", "generated (no --job, SLURM_JOB_ID, TORCHELASTIC_RUN_ID)");
      }
      // the kernel names the process in its Xid lines (pid=...): the processor maps it to the job
      who.attribution().put("pid", String.valueOf(child.pid()));
      RunRecords records = new RunRecords(settings, who, runId, Clock.systemUTC());
      java.util.function.Consumer<LogRecord> sink = shipping == null ? r -> {} : shipping::write;
      int maxLine = s == null ? AgentSettings.defaults().maxLineBytes() : s.maxLineBytes();
      Thread o = pump(child.stdout(), System.out, "stdout", records, maxLine, sink);
      Thread e = pump(child.stderr(), System.err, "stderr", records, maxLine, sink);
      ExitStatus status = child.waitFor();
      o.join();
      e.join();
      if (shipping != null) {
        shipping.write(records.exit(command, status));
        boolean drained = shipping.drain(drainSeconds);
        shipping.close();
        finish(shipping, drained);
      }
      return status.shellCode();
    }
  }

  private RunShipping openShipping(AgentSettings s) {
    KafkaSettings configured =
        bootstrap == null ? s.kafka() : s.kafka().withBootstrapServers(bootstrap);
    Map<String, String> props = new HashMap<>(configured.properties());
    props.putIfAbsent("max.block.ms", "5000"); // never hold the job hostage to an absent broker
    props.putIfAbsent("delivery.timeout.ms", "30000");
    props.putIfAbsent("request.timeout.ms", "10000");
    KafkaSettings kafka = new KafkaSettings(configured.bootstrapServers(), props);
    return RunShipping.open(
        Path.of(s.runSpoolRoot()),
        runId,
        s.spoolMaxBytes(),
        s.spoolSegmentBytes(),
        kafka,
        System.err);
  }

  private static void finish(RunShipping shipping, boolean drained) {
    Path dir = shipping.spoolDir();
    if (drained && dir != null) {
      try {
        deleteTree(dir);
      } catch (IOException e) {
        // shipped already; the agent removes an empty spool too
      }
    } else if (shipping.spooling()) {
      System.err.println(
          "cudawatch run: Kafka was unreachable; the output stays spooled in "
              + dir
              + " and the node agent ships it once Kafka is back");
    }
    if (shipping.notShipped() > 0) {
      System.err.println(
          "cudawatch run: "
              + shipping.notShipped()
              + " lines of the job were not shipped (see above)");
    }
  }

  private static Thread pump(
      java.io.InputStream in,
      java.io.OutputStream passThrough,
      String stream,
      RunRecords records,
      int maxLineBytes,
      java.util.function.Consumer<LogRecord> sink) {
    Thread t =
        new Thread(
            new StreamPump(
                in,
                passThrough,
                maxLineBytes,
                l -> records.line(stream, l),
                end -> records.quiet(stream, end),
                sink),
            "cudawatch-run-" + stream);
    t.start();
    return t;
  }

  static void deleteTree(Path dir) throws IOException {
    try (Stream<Path> w = Files.walk(dir)) {
      for (Path f : w.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(f);
      }
    }
  }
}
