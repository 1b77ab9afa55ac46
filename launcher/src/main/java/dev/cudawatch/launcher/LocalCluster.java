package dev.cudawatch.launcher;

import dev.cudawatch.alerts.AlertsService;
import dev.cudawatch.alerts.AlertsSettings;
import dev.cudawatch.alerts.http.Health;
import dev.cudawatch.alerts.notify.NotifySettings;
import dev.cudawatch.common.Topics;
import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.ingest.Agent;
import dev.cudawatch.ingest.AgentSettings;
import dev.cudawatch.ingest.AttributionSources;
import dev.cudawatch.ingest.SlurmSourceSettings;
import dev.cudawatch.ingest.ship.Shipper;
import dev.cudawatch.ingest.streams.GpuMemorySampler;
import dev.cudawatch.ingest.streams.KernelLogSource;
import dev.cudawatch.ingest.streams.PciMap;
import dev.cudawatch.kafka.embedded.EmbeddedKafkaBroker;
import dev.cudawatch.processor.ProcessorMain;
import dev.cudawatch.processor.config.ProcessorSettings;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.graph.StreamGraph;

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

  // An alert is visible once the checkpoint after its incident completes (exactly-once sinks):
  // these bound line -> alert latency (bench/run's latency table traces each stage).
  static final long LOCAL_CHECKPOINT_MS = 100;
  // The processor's own quiet-stream flush, for streams without the agent's quiet markers (other
  // shippers, the kernel log, a wrapped job still running). Its quiet is measured after Flink's
  // network buffers, which hold a burst's tail up to their 100 ms timeout, so it must exceed that.
  static final long LOCAL_FLUSH_MS = 250;

  /**
   * The agent marks a file quiet this long after its last line: the job's incident closes then, not
   * after LOCAL_FLUSH_MS in the job. A traceback's lines are written microseconds apart.
   */
  static final long LOCAL_QUIET_MARKER_MS = 50;

  /** Network buffers of the MiniCluster's task manager (Flink allocates them as they are used). */
  static final MemorySize LOCAL_NETWORK_MEMORY = MemorySize.ofMebiBytes(128);

  /** How long start-up waits for the job to run and complete its first checkpoint. */
  static final Duration JOB_READY_TIMEOUT = Duration.ofMinutes(2);

  /** The agent's pause after a round that read nothing (its default is 250 ms). */
  static final long LOCAL_AGENT_POLL_MS = 20;

  private final Options options;
  private final PrintStream console;
  private EmbeddedKafkaBroker broker;
  private AlertsService alerts;
  private JobClient job;
  private LocalFlinkJob flink;
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

  private java.util.function.UnaryOperator<AlertsSettings> alertsSettings = a -> a;

  /** Changes the alerts service's settings before it starts (e.g. node conditions on, in tests). */
  public LocalCluster withAlertsSettings(java.util.function.UnaryOperator<AlertsSettings> change) {
    this.alertsSettings = change;
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
    // every warm-up of local is in Warmups; the classifier's runs while the broker starts
    Warmups warmups = new Warmups(console);
    warmups.classifierInBackground();
    Files.createDirectories(options.logsDir());
    // the broker's ports are chosen first: the job's graph names the broker, and neither the graph
    // nor Flink's MiniCluster needs it running, so both are built beside the broker's start
    // (bench/results/profile-local-start.md: the MiniCluster is up before the broker is)
    int brokerPort = EmbeddedKafkaBroker.freePort();
    int controllerPort = EmbeddedKafkaBroker.freePort();
    KafkaSettings kafka = new KafkaSettings("127.0.0.1:" + brokerPort, Map.of());
    AgentSettings ag = agentSettings(kafka);
    FutureTask<FlinkStart> flinkStart = new FutureTask<>(() -> startFlink(kafka));
    daemon(flinkStart, "cudawatch-flink-start");
    try {
      startBrokerAndAlerts(kafka, brokerPort, controllerPort, warmups, ag.host());
      FlinkStart f = get(flinkStart);
      flink = LocalFlinkJob.submit(f.cluster(), f.graph(), "cudawatch-processor");
    } finally {
      if (flink == null) {
        closeCluster(flinkStart);
      }
    }
    job = flink.client();
    health.register(
        "flink-job",
        () -> {
          try {
            return job.getJobStatus().get() == JobStatus.RUNNING;
          } catch (Exception e) {
            return false;
          }
        });

    agent = new Agent(ag, shipper, Clock.systemUTC());
    if (options.replayDir() != null) {
      long n = agent.replay(options.replayDir());
      console.println("cudawatch local: replayed " + n + " lines from " + options.replayDir());
    }
    startNodeSources(ag);
    // no warm-up of the agent's per-line path: it cost ~2 s of the main thread's CPU before the
    // job was asked whether it runs, and the first incident came as fast without it (bench/results/
    // profile-local-start.md); the agent's first rounds compile it on real lines
    agentThread = new Thread(agent, "cudawatch-agent");
    agentThread.setDaemon(true);
    agentThread.start();
    health.register("agent", agent::started);
    // started means a failure written now is alerted on at once, not after the job comes up. The
    // two checkpoints after ready stay, though the markers were read before: ready at the second
    // checkpoint since the job started saved ~0.2 s, but the latency bench's first incident then
    // waited ~0.5 s longer for its commit (bench/results/profile-local-start.md)
    flink.awaitReady(JOB_READY_TIMEOUT);
    flink.awaitCheckpoints(2, JOB_READY_TIMEOUT);
    warmups.awaitBroker(JOB_READY_TIMEOUT);
  }

  /** The job's graph and its MiniCluster, started without the broker. */
  private record FlinkStart(MiniCluster cluster, StreamGraph graph) {}

  private FlinkStart startFlink(KafkaSettings kafka) throws Exception {
    // unset keys take the processor's defaults; local mode keeps a short transaction timeout so a
    // crash never holds read_committed readers back for long, and checkpoints and flushes often: an
    // alert is visible once the checkpoint after it completes, so these bound its latency
    ProcessorSettings ps =
        ProcessorSettings.builder()
            .kafka(kafka)
            .parallelism(options.parallelism())
            .checkpointIntervalMs(LOCAL_CHECKPOINT_MS)
            .transactionalIdPrefix("cudawatch-local")
            .transactionTimeoutMs(60_000L)
            .flushAfterMs(LOCAL_FLUSH_MS)
            .catalogs(options.catalogs())
            .build();
    ps.validate("");
    Configuration conf = new Configuration();
    conf.set(RestOptions.PORT, 0);
    conf.set(RestOptions.BIND_ADDRESS, "127.0.0.1");
    // Flink's network buffer timeout stays at its default (100 ms): at 5 ms every record became
    // its own buffer and 10,000 lines/s overloaded this 2-core machine (bench/run, issue 19)
    // the job's exchanges ask for ~83 MB of network buffers at parallelism 2; a MiniCluster's
    // default of 64 MB made Flink warn "Memory usage [129%] is too high" once the job ran
    conf.set(TaskManagerOptions.NETWORK_MEMORY_MIN, LOCAL_NETWORK_MEMORY);
    conf.set(TaskManagerOptions.NETWORK_MEMORY_MAX, LOCAL_NETWORK_MEMORY);
    conf.addAll(Configuration.fromMap(flinkSettings));
    StreamExecutionEnvironment env =
        StreamExecutionEnvironment.createLocalEnvironment(options.parallelism(), conf);
    ProcessorMain.configure(env, ps);
    ProcessorMain.job(ps).build(env);
    StreamGraph graph = env.getStreamGraph();
    return new FlinkStart(LocalFlinkJob.cluster(conf, options.parallelism()), graph);
  }

  private void startBrokerAndAlerts(
      KafkaSettings kafka, int brokerPort, int controllerPort, Warmups warmups, String host)
      throws Exception {
    broker =
        EmbeddedKafkaBroker.start(options.dataDir().resolve("kafka"), brokerPort, controllerPort);
    broker.createTopics(Topics.ALL, 2);
    broker.createTopics(List.of(Warmups.BROKER_TOPIC), 1);
    warmups.brokerInBackground(broker.bootstrapServers());
    health.register("kafka", () -> broker != null);
    // the job's warm-up markers wait in the broker for the job, which reads them as it starts
    shipper = new Shipper(kafka);
    Warmups.job(shipper, host);

    AlertsSettings as =
        AlertsSettings.builder()
            .kafka(kafka)
            .httpPort(options.httpPort())
            .notifications(
                NotifySettings.builder()
                    .alertmanagerUrl(options.alertmanagerUrl())
                    .webhookUrl(options.webhookUrl())
                    .slackWebhookUrl(options.slackUrl())
                    .stateDir(options.dataDir().resolve("alerts").toString())
                    .build())
            .build();
    as = alertsSettings.apply(as);
    as.validate("");
    alerts = new AlertsService(as, health, console, Clock.systemUTC());
    alerts.start();
  }

  private AgentSettings agentSettings(KafkaSettings kafka) {
    return AgentSettings.builder()
        .kafka(kafka)
        .globs(List.of(options.logsDir().toAbsolutePath() + "/*.log"))
        .stateDir(options.dataDir().resolve("agent").toString())
        // one machine's few log files: scanning the glob every round keeps a new file's
        // first line as quick as the rest (the agent's default scans once a second)
        .scanIntervalMs(0)
        .pollIntervalMs(LOCAL_AGENT_POLL_MS)
        .quietMarkerMs(LOCAL_QUIET_MARKER_MS)
        .build();
  }

  /** The started task's result, its own exception unwrapped. */
  private static <T> T get(FutureTask<T> task) throws Exception {
    try {
      return task.get();
    } catch (ExecutionException e) {
      throw e.getCause() instanceof Exception x ? x : e;
    }
  }

  /** Closes the MiniCluster of a start that was never submitted to (start failed on the way). */
  private void closeCluster(FutureTask<FlinkStart> flinkStart) {
    try {
      get(flinkStart).cluster().close();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      // its own start failed: nothing runs to close, and the first failure is the one to report
    }
  }

  /**
   * The agent's settings as a workstation's attribution needs them: the nvidia-smi that was found
   * (null: the agent's default, if the machine has one), and Slurm only where its prolog's sidecar
   * directory exists (a Slurm node); Kubernetes is used only where the kubelet's socket exists.
   */
  static AgentSettings workstation(AgentSettings ag, String nvidiaSmi) {
    SlurmSourceSettings s = ag.slurm();
    SlurmSourceSettings slurm =
        s.enabled() && Files.isDirectory(Path.of(s.sidecarDir())) ? s : s.withEnabled(false);
    return ag.toBuilder()
        .slurm(slurm)
        .nvidiaSmi(nvidiaSmi != null ? nvidiaSmi : ag.nvidiaSmi())
        .build();
  }

  /** Kernel log and GPU memory, as the agent runtime has them on a GPU node, or replayed. */
  private void startNodeSources(AgentSettings agentSettings) throws IOException {
    String host = agentSettings.host();
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
    // the agent runtime's attribution chain, with the sources a workstation has: a log's lines
    // take the job, rank and GPU of the process writing it; Slurm and Kubernetes where present
    AttributionSources attribution =
        AttributionSources.open(
            workstation(agentSettings, nodeSources.nvidiaSmi()), Clock.systemUTC());
    stops.add(attribution::close);
    agent.attributeFiles(attribution.chain());
    String kernel = nodeSources.kernelLog();
    if ("/dev/kmsg".equals(kernel)) {
      // a kernel line naming a pid (an Xid, the OOM killer) takes that process's job and rank
      dev.cudawatch.ingest.attribution.KernelPidJoin pidJoin =
          dev.cudawatch.ingest.attribution.KernelPidJoin.forNode(
              Path.of("/proc"), attribution.inventory());
      KernelLogSource k =
          new KernelLogSource(
              Path.of(kernel),
              dev.cudawatch.ingest.streams.BootInfo.read(Path.of("/proc")),
              options.dataDir().resolve("agent").resolve("kernel"),
              host,
              () -> pci,
              pidJoin,
              r -> shipper.send(r, () -> {}),
              Clock.systemUTC());
      daemon(k, "cudawatch-kmsg");
      stops.add(k::stop);
      stops.add(pidJoin::close); // after the reader that asks it
    } else if (kernel != null) {
      agent.followKernelLog(Path.of(kernel), pci);
    }
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    t.start();
    return t;
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
    if (flink != null) {
      try {
        flink.close();
      } catch (Exception e) {
        console.println("cudawatch local: flink: " + e.getMessage());
      }
    }
    if (alerts != null) {
      alerts.close();
    }
    if (broker != null) {
      broker.close();
      broker = null;
    }
  }
}
