package dev.cudawatch.ingest;

import dev.cudawatch.common.cli.Cli;
import dev.cudawatch.common.cli.LogOptions;
import dev.cudawatch.common.cli.Logging;
import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.ingest.run.ChildProcess;
import dev.cudawatch.ingest.run.ExitStatus;
import dev.cudawatch.ingest.run.FailureReport;
import dev.cudawatch.ingest.run.OutputTail;
import dev.cudawatch.ingest.run.RunIdentity;
import dev.cudawatch.ingest.run.RunNotices;
import dev.cudawatch.ingest.run.RunOutputPump;
import dev.cudawatch.ingest.run.RunOutputQueue;
import dev.cudawatch.ingest.run.RunShipper;
import dev.cudawatch.ingest.run.RunShipping;
import dev.cudawatch.ingest.run.SignalForwarding;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
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
@Command(name = "run", description = "Run a training command and ship its output to Kafka.")
public final class RunMain implements Callable<Integer> {
  @CommandLine.Mixin LogOptions logOptions;

  @Option(
      names = "--job",
      paramLabel = "ID",
      description =
          "job id (default: CUDAWATCH_JOB, SLURM_JOB_ID, TORCHELASTIC_RUN_ID, pod name); the"
              + " command and its descendants get it as CUDAWATCH_JOB")
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
      defaultValue = "${env:CUDAWATCH_RUN_DRAIN_SECONDS:-1}",
      description =
          "how long after the command ends to wait for Kafka; what is not shipped by then stays"
              + " spooled for the node agent (default: $CUDAWATCH_RUN_DRAIN_SECONDS, else 1)")
  int drainSeconds;

  @Option(
      names = "--log-file",
      paramLabel = "FILE",
      description =
          "cudawatch's own log (default: $CUDAWATCH_RUN_LOG_FILE, else none: the job's stderr is"
              + " the job's)")
  Path logFile;

  @Option(
      names = "--no-diagnosis",
      description =
          "print nothing when the job fails (by default cudawatch's diagnosis follows the job's"
              + " output: root cause, line, next steps; in a Slurm job the verdict also goes to its"
              + " Comment); CUDAWATCH_RUN_DIAGNOSIS=0 does the same")
  boolean noDiagnosis;

  @Option(
      names = "--diagnosis-seconds",
      defaultValue = "${env:CUDAWATCH_RUN_DIAGNOSIS_SECONDS:-3}",
      description =
          "how long after the job ends the diagnosis may take; past it, one line says there is"
              + " none (default: $CUDAWATCH_RUN_DIAGNOSIS_SECONDS, else 3)")
  int diagnosisSeconds;

  @Option(
      names = "--alerts-url",
      paramLabel = "URL",
      defaultValue = "${env:CUDAWATCH_URL}",
      description =
          "the alerts service: the diagnosis links the job's incidents there (default:"
              + " $CUDAWATCH_URL, else no link)")
  String alertsUrl;

  /** One id per run: the stream id of its records and the name of its spool. */
  private final String runId = UUID.randomUUID().toString();

  @Parameters(
      arity = "1..*",
      paramLabel = "CMD",
      description = "the command and its arguments (after --)")
  List<String> command = new ArrayList<>();

  /** How long the job's pipes may stay open after it exits (a child it left may hold them). */
  static final Duration PIPE_GRACE = Duration.ofSeconds(1);

  /** How long the first lines wait for nvidia-smi's GPU list before they ship without it. */
  static final Duration INVENTORY_WAIT = Duration.ofSeconds(2);

  /** The last bytes of each stream kept for the diagnosis of a failed job. */
  static final int TAIL_BYTES = 1 << 20;

  /** Lines waiting for the shipping thread, at most; more are dropped and counted. */
  static final long QUEUE_BYTES = 16L << 20;

  public static void main(String[] args) {
    // before any logger exists: nothing of cudawatch's or its libraries' logging, nor Log4j's own
    // status lines, may reach the job's stderr
    System.setProperty("log4j2.statusLoggerLevel", "OFF");
    System.setProperty(Logging.TARGET_PROPERTY, "none");
    CommandLine cl = Cli.commandLine(new RunMain());
    cl.setStopAtPositional(true);
    System.exit(cl.execute(args));
  }

  @Override
  public Integer call() throws Exception {
    Path log = writableLog();
    if (log != null) {
      Logging.redirect(log); // main() already sent the log nowhere
    }
    RunNotices notices = new RunNotices(System.err);
    // Nothing before the child starts may stop it from starting: a bad configuration is
    // reported and the job runs unwatched (its output still passes through).
    AgentSettings s;
    try {
      s = AgentSettings.load(config, configEnvironment(System.getenv()));
    } catch (Exception | LinkageError e) {
      notices.degraded(e.getMessage() + "; the job runs without shipping");
      s = null;
    }
    ChildProcess child;
    try {
      // the job's processes carry the job: the agent joins a kernel line's pid to it
      child =
          ChildProcess.start(
              command,
              RunIdentity.childEnvironment(System.getenv(), job, s == null ? null : s.job()));
    } catch (IOException e) {
      System.err.println("cudawatch run: " + e.getMessage());
      return 127;
    }
    try (SignalForwarding signals = SignalForwarding.to(child)) {
      // the job's output flows before anything is asked of nvidia-smi, Kafka or the disk
      AgentSettings settings = s == null ? AgentSettings.defaults() : s;
      RunOutputQueue queue = new RunOutputQueue(s == null ? 0 : queueBytes());
      Map<String, OutputTail> tails = diagnosing() ? tails() : Map.of();
      Thread o = pump(child.stdout(), System.out, "stdout", queue, tails.get("stdout"));
      Thread e = pump(child.stderr(), System.err, "stderr", queue, tails.get("stderr"));
      RunShipper shipper = s == null ? null : startShipping(s, child.pid(), queue, notices);
      ExitStatus status = child.waitFor();
      long exited = System.nanoTime(); // deadlines: the monotonic clock
      // what the job wrote before it ended may still be in the pipes; a child it left behind
      // (`sleep 600 &`) may hold them open for good: `run` leaves when the job does
      o.join(Math.max(1, (exited + PIPE_GRACE.toNanos() - System.nanoTime()) / 1_000_000));
      e.join(Math.max(1, (exited + PIPE_GRACE.toNanos() - System.nanoTime()) / 1_000_000));
      // a job stopped through `run` (Slurm's or Kubernetes' SIGTERM) did not fail: nothing to say
      FailureReport failure =
          status.shellCode() == 0 || tails.isEmpty() || signals.forwarded() > 0
              ? null
              : FailureReport.start(
                  tails,
                  status,
                  FailureReport.incidentsLink(alertsUrl, knownJob(s)),
                  System.getenv(),
                  Duration.ofSeconds(Math.max(1, diagnosisSeconds)));
      if (shipper != null) {
        long deadline =
            Math.max(exited + drainSeconds * 1_000_000_000L, System.nanoTime() + 200_000_000L);
        boolean shipped = shipper.finish(command, status, deadline);
        report(shipper, shipped, queue, notices);
      }
      if (failure != null) {
        failure.print(System.err); // last: the job's stderr ends with it
      }
      return status.shellCode();
    }
  }

  /**
   * Settings `run` takes from the environment, which is the job's: never the node's identity (its
   * host, its Slurm node name), which comes from the configuration file or the machine. A job that
   * set them is not told (its stderr is its own); cudawatch's log says so.
   */
  static final java.util.Set<String> IDENTITY =
      java.util.Set.of("CUDAWATCH_AGENT_HOST", "CUDAWATCH_AGENT_SLURM__NODE_NAME");

  static Map<String, String> configEnvironment(Map<String, String> env) {
    Map<String, String> out = new HashMap<>(env);
    for (String k : IDENTITY) {
      if (out.remove(k) != null) {
        org.slf4j.LoggerFactory.getLogger(RunMain.class)
            .warn("{} from the job's environment is ignored: the node names itself", k);
      }
    }
    return out;
  }

  private RunShipper startShipping(
      AgentSettings s, long pid, RunOutputQueue queue, RunNotices notices) {
    Map<String, String> env = System.getenv();
    RunIdentity identity =
        new RunIdentity(
            s.host(),
            env,
            job,
            s.job(),
            pid,
            runId,
            Clock.systemUTC(),
            RunIdentity.inventory(env, s.nvidiaSmi()),
            INVENTORY_WAIT);
    RunShipper shipper =
        new RunShipper(queue, () -> openShipping(s, notices), identity, notices, s.maxLineBytes());
    Thread t = new Thread(shipper, "cudawatch-run-ship");
    t.setDaemon(true);
    t.start();
    return shipper;
  }

  private RunShipping openShipping(AgentSettings s, RunNotices notices) {
    KafkaSettings configured =
        bootstrap == null ? s.kafka() : s.kafka().withBootstrapServers(bootstrap);
    Map<String, String> props = new HashMap<>(configured.properties());
    props.putIfAbsent("max.block.ms", "5000"); // never hold the job hostage to an absent broker
    props.putIfAbsent("delivery.timeout.ms", "30000");
    props.putIfAbsent("request.timeout.ms", "10000");
    KafkaSettings kafka = new KafkaSettings(configured.bootstrapServers(), props);
    return RunShipping.open(
        Path.of(s.runSpoolRoot()), runId, s.spoolMaxBytes(), s.spoolSegmentBytes(), kafka, notices);
  }

  /** The closing line, only when something was left spooled or not shipped. */
  static void report(
      RunShipper shipper, boolean shipped, RunOutputQueue queue, RunNotices notices) {
    RunShipping shipping = shipper.shipping();
    long lost = queue.droppedLines() + (shipping == null ? 0 : shipping.notShipped());
    String lostText = lost > 0 ? lost + " lines of the job were not shipped" : null;
    if (shipper.failed()) {
      return; // said when it happened; the spool holds what came before
    }
    if (!shipped && shipping != null && shipping.spooling()) {
      notices.end(
          "Kafka did not take the output in time; it stays spooled in "
              + shipping.spoolDir()
              + " and the node agent ships it"
              + (lostText == null ? "" : "; " + lostText));
    } else if (lostText != null) {
      notices.end(lostText);
    }
  }

  /** 16 MiB of the job's output may wait for shipping, less in a small heap. */
  private static long queueBytes() {
    return Math.min(QUEUE_BYTES, Runtime.getRuntime().maxMemory() / 8);
  }

  /** The log file asked for, when it can be written; else none (never the job's stderr). */
  private Path writableLog() {
    Path f = logFile;
    if (f == null && System.getenv("CUDAWATCH_RUN_LOG_FILE") != null) {
      f = Path.of(System.getenv("CUDAWATCH_RUN_LOG_FILE"));
    }
    if (f == null) {
      return null;
    }
    try {
      Files.newOutputStream(
              f, java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND)
          .close();
      return f;
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  /** On unless {@code --no-diagnosis} or {@code CUDAWATCH_RUN_DIAGNOSIS=0} (or false, off, no). */
  private boolean diagnosing() {
    String env = System.getenv("CUDAWATCH_RUN_DIAGNOSIS");
    return !noDiagnosis
        && (env == null || !java.util.Set.of("0", "false", "off", "no").contains(env.strip()));
  }

  /** Each stream's last bytes, less in a small heap; none when there is no room at all. */
  private static Map<String, OutputTail> tails() {
    try {
      int bytes = (int) Math.min(TAIL_BYTES, Runtime.getRuntime().maxMemory() / 32);
      Map<String, OutputTail> t = new java.util.LinkedHashMap<>(); // stderr first: it wins ties
      t.put("stderr", new OutputTail(bytes));
      t.put("stdout", new OutputTail(bytes));
      return t;
    } catch (OutOfMemoryError e) {
      return Map.of();
    }
  }

  /** The job's id as its records carry it, when it is known before any line ships. */
  private String knownJob(AgentSettings s) {
    try {
      return dev.cudawatch.ingest.attribution.RunAttribution.of(
              System.getenv(),
              job,
              s == null ? null : s.job(),
              dev.cudawatch.ingest.attribution.GpuInventory.empty())
          .job();
    } catch (RuntimeException e) {
      return null;
    }
  }

  private static Thread pump(
      java.io.InputStream in,
      java.io.OutputStream passThrough,
      String stream,
      RunOutputQueue queue,
      OutputTail tail) {
    Thread t =
        new Thread(
            new RunOutputPump(in, passThrough, stream, queue, tail), "cudawatch-run-" + stream);
    t.setDaemon(true); // a child left holding the pipe must not keep `run` alive
    t.start();
    return t;
  }
}
