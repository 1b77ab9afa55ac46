package dev.cudawatch.ingest;

import dev.cudawatch.common.config.ConfigLoader;
import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.ingest.ship.Shipper;
import dev.cudawatch.ingest.spool.DiskSpool;
import dev.cudawatch.ingest.spool.SpoolForwarder;
import dev.cudawatch.ingest.streams.SpoolingOutput;
import dev.cudawatch.ingest.streams.StreamPump;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
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
    description = "Run a training command and ship its output to Kafka.")
public final class RunMain implements Callable<Integer> {
  /** Spools of runs, under the state directory; the agent ships what they still hold. */
  public static final String RUN_SPOOLS = "spool-run";

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

  @Parameters(
      arity = "1..*",
      paramLabel = "CMD",
      description = "the command and its arguments (after --)")
  List<String> command = new ArrayList<>();

  public static void main(String[] args) {
    CommandLine cl = new CommandLine(new RunMain());
    cl.setStopAtPositional(true);
    System.exit(cl.execute(args));
  }

  @Override
  public Integer call() throws Exception {
    AgentSettings s =
        new ConfigLoader("CUDAWATCH_AGENT", System.getenv()).load(config, AgentSettings.class);
    KafkaSettings configured =
        bootstrap == null ? s.kafka() : s.kafka().withBootstrapServers(bootstrap);
    Map<String, String> props = new HashMap<>(configured.properties());
    props.putIfAbsent("max.block.ms", "5000"); // never hold the job hostage to an absent broker
    props.putIfAbsent("delivery.timeout.ms", "30000");
    props.putIfAbsent("request.timeout.ms", "10000");
    KafkaSettings kafka = new KafkaSettings(configured.bootstrapServers(), props);
    String jobId =
        job != null
            ? job
            : s.job() != null ? s.job() : "run-" + UUID.randomUUID().toString().substring(0, 8);
    String runId = UUID.randomUUID().toString();
    Map<String, String> env = System.getenv();
    Integer rank = NodeEnvironment.rank(env);
    Integer localRank = NodeEnvironment.localRank(env);
    Integer gpu = singleVisibleDevice(env.get("CUDA_VISIBLE_DEVICES"));
    Clock clock = Clock.systemUTC();

    Process p;
    try {
      p = new ProcessBuilder(command).redirectInput(ProcessBuilder.Redirect.INHERIT).start();
    } catch (IOException e) {
      System.err.println("cudawatch run: cannot start " + command.get(0) + ": " + e.getMessage());
      return 127;
    }
    Path spoolDir = Path.of(s.stateDir(), RUN_SPOOLS, runId);
    DiskSpool spool = new DiskSpool(spoolDir, s.spoolMaxBytes(), s.spoolSegmentBytes());
    SpoolingOutput out = new SpoolingOutput(spool, 100);
    Shipper shipper = new Shipper(kafka);
    SpoolForwarder forwarder = new SpoolForwarder(spool, shipper, 20_000);
    Thread shipping = new Thread(forwarder, "cudawatch-run-ship");
    shipping.setDaemon(true);
    shipping.start();

    String source = "run:" + jobId + (rank != null ? "/rank" + rank : "");
    Thread o =
        pump(
            p.getInputStream(),
            System.out,
            "stdout",
            source,
            runId,
            jobId,
            rank,
            localRank,
            gpu,
            s,
            out,
            clock);
    Thread e =
        pump(
            p.getErrorStream(),
            System.err,
            "stderr",
            source,
            runId,
            jobId,
            rank,
            localRank,
            gpu,
            s,
            out,
            clock);
    int code = p.waitFor();
    o.join();
    e.join();
    String status =
        code > 128 ? "signal=" + (code - 128) + " exit_code=" + code : "exit_code=" + code;
    out.write(
        LogRecord.builder()
            .host(s.host())
            .job(jobId)
            .rank(rank)
            .localRank(localRank)
            .gpu(gpu)
            .kind(RecordKind.EXIT)
            .stream("exit")
            .source(source + "/exit")
            .sourceId(runId)
            .offset(0)
            .eventTime(clock.instant())
            .text("cudawatch run: " + String.join(" ", command) + " finished with " + status)
            .build());
    out.sync();

    long deadline = System.currentTimeMillis() + drainSeconds * 1000L;
    while ((spool.hasUnread() || forwarder.inFlight() > 0)
        && System.currentTimeMillis() < deadline) {
      Thread.sleep(50);
    }
    boolean drained = !spool.hasUnread() && forwarder.inFlight() == 0;
    forwarder.close();
    shipping.interrupt();
    shipper.close();
    spool.close();
    if (drained) {
      deleteTree(spoolDir);
    } else {
      System.err.println(
          "cudawatch run: Kafka at "
              + kafka.bootstrapServers()
              + " was unreachable; the output stays spooled in "
              + spoolDir
              + " and the agent ships it once Kafka is back");
    }
    return code;
  }

  static Integer singleVisibleDevice(String visible) {
    if (visible == null || visible.isBlank() || visible.contains(",")) {
      return null;
    }
    try {
      return Integer.valueOf(visible.strip());
    } catch (NumberFormatException e) {
      return null; // a GPU UUID
    }
  }

  private static Thread pump(
      InputStream in,
      OutputStream passThrough,
      String stream,
      String source,
      String runId,
      String job,
      Integer rank,
      Integer localRank,
      Integer gpu,
      AgentSettings s,
      SpoolingOutput out,
      Clock clock) {
    Thread t =
        new Thread(
            new StreamPump(
                in,
                passThrough,
                s.maxLineBytes(),
                l ->
                    LogRecord.builder()
                        .host(s.host())
                        .job(job)
                        .rank(rank != null ? rank : Agent.rankPrefix(l.text()))
                        .localRank(localRank)
                        .gpu(gpu)
                        .stream(stream)
                        .source(source + "/" + stream)
                        .sourceId(runId)
                        .offset(l.start())
                        .eventTime(clock.instant())
                        .text(l.text())
                        .build(),
                out::write),
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
