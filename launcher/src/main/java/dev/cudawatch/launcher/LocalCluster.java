package dev.cudawatch.launcher;

import dev.cudawatch.alerts.AlertsService;
import dev.cudawatch.alerts.AlertsSettings;
import dev.cudawatch.alerts.http.Health;
import dev.cudawatch.alerts.notify.NotifySettings;
import dev.cudawatch.common.Topics;
import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.ingest.Agent;
import dev.cudawatch.ingest.AgentSettings;
import dev.cudawatch.ingest.ship.Shipper;
import dev.cudawatch.ingest.streams.GpuMemorySampler;
import dev.cudawatch.ingest.streams.KernelLogSource;
import dev.cudawatch.ingest.streams.PciMap;
import dev.cudawatch.kafka.embedded.EmbeddedKafkaBroker;
import dev.cudawatch.processor.ProcessorMain;
import dev.cudawatch.processor.ProcessorSettings;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * Everything of cudawatch in one JVM, on real parts: a KRaft broker, the Flink job on a local
 * MiniCluster, the alerts service and the agent. Started in dependency order, closed in reverse.
 */
public final class LocalCluster implements AutoCloseable {
  /**
   * What to run.
   *
   * @param dataDir broker data and agent state
   * @param logsDir training logs to follow ({@code *.log})
   * @param replayDir files to ship once first, or null
   * @param httpPort alerts HTTP port (0 for any free one)
   * @param parallelism Flink parallelism
   * @param alertmanagerUrl Alertmanager URL, or null
   * @param webhookUrl webhook URL, or null
   * @param slackUrl Slack incoming-webhook URL, or null
   * @param catalogs extra signature catalogs
   */
  public record Options(
      Path dataDir,
      Path logsDir,
      Path replayDir,
      int httpPort,
      int parallelism,
      String alertmanagerUrl,
      String webhookUrl,
      String slackUrl,
      List<String> catalogs) {}

  static final long LOCAL_CHECKPOINT_MS = 250;
  static final long LOCAL_FLUSH_MS = 250;

  private final Options options;
  private final PrintStream console;
  private EmbeddedKafkaBroker broker;
  private AlertsService alerts;
  private JobClient job;
  private Shipper shipper;
  private Agent agent;
  private Thread agentThread;
  private final Health health = new Health();
  private NodeSources nodeSources = NodeSources.none();
  private final List<Runnable> stops = new java.util.ArrayList<>();
  private RecordedSamples gpuReplay;
  private final Map<String, String> flinkSettings = new java.util.LinkedHashMap<>();

  public LocalCluster(Options options, PrintStream console) {
    this.options = options;
    this.console = console;
  }

  /** The machine's kernel log and GPU samples to use (default: none). */
  public LocalCluster withNodeSources(NodeSources sources) {
    this.nodeSources = sources;
    return this;
  }

  /** A Flink setting for the embedded job's MiniCluster (e.g. a metrics reporter). */
  public LocalCluster withFlinkSetting(String key, String value) {
    flinkSettings.put(key, value);
    return this;
  }

  public NodeSources nodeSources() {
    return nodeSources;
  }

  public void start() throws Exception {
    Files.createDirectories(options.logsDir());
    broker = EmbeddedKafkaBroker.start(options.dataDir().resolve("kafka"));
    broker.createTopics(Topics.ALL, 2);
    KafkaSettings kafka = new KafkaSettings(broker.bootstrapServers(), Map.of());
    health.register("kafka", () -> broker != null);

    AlertsSettings as =
        AlertsSettings.defaults()
            .with(
                kafka,
                options.httpPort(),
                NotifySettings.defaults()
                    .withReceivers(
                        options.alertmanagerUrl(),
                        options.webhookUrl(),
                        options.slackUrl(),
                        options.dataDir().resolve("alerts").toString()));
    as.validate("");
    alerts = new AlertsService(as, health, console, Clock.systemUTC());
    alerts.start();

    // nulls take the processor's defaults; local mode keeps a short transaction timeout so a crash
    // never holds read_committed readers back for long, and checkpoints and flushes often: an
    // alert is visible once the checkpoint after it completes, so these bound its latency
    ProcessorSettings ps =
        new ProcessorSettings(
            kafka,
            null,
            options.parallelism(),
            LOCAL_CHECKPOINT_MS,
            "cudawatch-local",
            60_000L,
            LOCAL_FLUSH_MS,
            null,
            options.catalogs(),
            null,
            null,
            null);
    ps.validate("");
    Configuration conf = new Configuration();
    conf.set(RestOptions.PORT, 0);
    conf.set(RestOptions.BIND_ADDRESS, "127.0.0.1");
    conf.addAll(Configuration.fromMap(flinkSettings));
    StreamExecutionEnvironment env =
        StreamExecutionEnvironment.createLocalEnvironment(options.parallelism(), conf);
    ProcessorMain.configure(env, ps);
    ProcessorMain.job(ps).build(env);
    job = env.executeAsync("cudawatch-processor");
    health.register(
        "flink-job",
        () -> {
          try {
            return job.getJobStatus().get() == JobStatus.RUNNING;
          } catch (Exception e) {
            return false;
          }
        });

    AgentSettings ag =
        AgentSettings.defaults()
            .with(
                kafka,
                List.of(options.logsDir().toAbsolutePath() + "/*.log"),
                options.dataDir().resolve("agent").toString())
            // one machine's few log files: scanning the glob every round keeps a new file's
            // first line as quick as the rest (the agent's default scans once a second)
            .withScanInterval(0);
    shipper = new Shipper(kafka);
    agent = new Agent(ag, shipper, Clock.systemUTC());
    if (options.replayDir() != null) {
      long n = agent.replay(options.replayDir());
      console.println("cudawatch local: replayed " + n + " lines from " + options.replayDir());
    }
    startNodeSources(ag.host());
    agentThread = new Thread(agent, "cudawatch-agent");
    agentThread.setDaemon(true);
    agentThread.start();
    health.register("agent", agent::started);
  }

  /** Kernel log and GPU memory, as the agent runtime has them on a GPU node, or replayed. */
  private void startNodeSources(String host) throws IOException {
    Map<String, Integer> pci = new java.util.HashMap<>();
    if (nodeSources.gpuSamples() != null) {
      RecordedSamples replay =
          new RecordedSamples(
              nodeSources.gpuSamples(), host, r -> shipper.send(r, () -> {}), Clock.systemUTC());
      pci.putAll(replay.pciToGpu()); // the recording names each GPU's PCI address
      gpuReplay = replay;
      daemon(replay, "cudawatch-gpu-replay");
      stops.add(replay::stop);
    } else if (nodeSources.nvidiaSmi() != null) {
      pci.putAll(PciMap.query(nodeSources.nvidiaSmi()));
      GpuMemorySampler sampler =
          new GpuMemorySampler(
              nodeSources.nvidiaSmi(),
              500,
              host,
              r -> shipper.send(r, () -> {}),
              Clock.systemUTC(),
              java.time.ZoneId.systemDefault()); // nvidia-smi prints the node's local time
      daemon(sampler, "cudawatch-nvidia-smi");
      stops.add(sampler::stop);
    }
    if (nodeSources.nvidiaSmi() != null && Files.isDirectory(Path.of("/proc/self/fd"))) {
      // on a GPU machine a log's lines take the job, rank and GPU of the process writing it
      agent.attributeFiles(
          new dev.cudawatch.ingest.attribution.FileAttribution(
              dev.cudawatch.ingest.attribution.ProcessScan.forNode(nodeSources.nvidiaSmi()),
              Clock.systemUTC(),
              60_000));
    }
    String kernel = nodeSources.kernelLog();
    if ("/dev/kmsg".equals(kernel)) {
      KernelLogSource k =
          new KernelLogSource(
              Path.of(kernel),
              dev.cudawatch.ingest.streams.BootInfo.read(Path.of("/proc")),
              options.dataDir().resolve("agent").resolve("kernel"),
              host,
              pci,
              r -> shipper.send(r, () -> {}),
              Clock.systemUTC());
      daemon(k, "cudawatch-kmsg");
      stops.add(k::stop);
    } else if (kernel != null) {
      agent.followKernelLog(Path.of(kernel), pci);
    }
  }

  private static void daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    t.start();
  }

  /** The GPU samples being replayed, or null. */
  public RecordedSamples gpuReplay() {
    return gpuReplay;
  }

  public int httpPort() {
    return alerts.httpPort();
  }

  public String bootstrapServers() {
    return broker.bootstrapServers();
  }

  public Health health() {
    return health;
  }

  @Override
  public void close() {
    stops.forEach(Runnable::run);
    try {
      if (agent != null) {
        agent.close();
        agentThread.interrupt();
      }
      if (shipper != null) {
        shipper.close();
      }
    } catch (IOException e) {
      console.println("cudawatch local: agent: " + e.getMessage());
    }
    if (job != null) {
      try {
        job.cancel().get();
      } catch (Exception e) {
        // the job may already be gone
      }
    }
    if (alerts != null) {
      try {
        alerts.close();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    if (broker != null) {
      broker.close();
      broker = null;
    }
  }
}
