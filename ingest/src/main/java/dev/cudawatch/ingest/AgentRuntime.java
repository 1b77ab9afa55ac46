package dev.cudawatch.ingest;

import dev.cudawatch.common.io.AtomicFiles;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.ingest.attribution.KernelPidJoin;
import dev.cudawatch.ingest.run.RunSpoolAdoption;
import dev.cudawatch.ingest.ship.DeadLetters;
import dev.cudawatch.ingest.ship.Shipper;
import dev.cudawatch.ingest.spool.DiskSpool;
import dev.cudawatch.ingest.spool.SpoolForwarder;
import dev.cudawatch.ingest.streams.BootInfo;
import dev.cudawatch.ingest.streams.GpuMemorySampler;
import dev.cudawatch.ingest.streams.KernelLogSource;
import dev.cudawatch.ingest.streams.NvidiaSmiHealth;
import dev.cudawatch.ingest.streams.PciMap;
import dev.cudawatch.ingest.streams.SpoolingOutput;
import dev.cudawatch.ingest.streams.StreamPump;
import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The agent process: the file follower, plus the stream sources (stdin, the kernel log, GPU memory
 * samples) that go through the disk spool, the spool's forwarder, and /metrics + /healthz. The
 * node's time zone is the clock's ({@code AgentMain} passes the system's): nvidia-smi prints local
 * times without a zone. {@code /healthz} answers 503, naming the source, while a source thread has
 * died or the spool cannot be written.
 */
public final class AgentRuntime implements AutoCloseable {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(AgentRuntime.class);
  private final AgentSettings settings;
  private final Clock clock;
  private final Shipper shipper;
  private final Agent agent;
  private final DiskSpool spool;
  private final SpoolingOutput spooled;
  private final SpoolForwarder forwarder;
  private final FileChannel lockChannel;
  private final FileLock lock;
  private final SourceHealth health = new SourceHealth();
  private final AtomicLong streamLines = new AtomicLong();
  private final AtomicLong spoolErrors = new AtomicLong();
  // set while starting, read by the endpoint's threads (which start first)
  private volatile KernelLogSource kernel;
  private volatile KernelPidJoin pidJoin;
  private volatile GpuMemorySampler sampler;
  private AgentEndpoint http;
  private volatile AttributionSources attribution; // opened after the endpoint started
  private final NvidiaSmiHealth smiHealth = new NvidiaSmiHealth();

  /** How long start waits for nvidia-smi's answers before starting without them. */
  static final java.time.Duration START_WAIT = java.time.Duration.ofSeconds(1);

  /** How long close gives the loops to end their round, and then the broker to take the rest. */
  private static final java.time.Duration LOOPS_STOP = java.time.Duration.ofMillis(1000);

  private static final java.time.Duration PRODUCER_CLOSE = java.time.Duration.ofMillis(1500);
  private volatile RunSpoolAdoption runSpools; // started after the endpoint

  public AgentRuntime(AgentSettings settings, Clock clock) throws IOException {
    this.settings = settings;
    this.clock = clock;
    Path state = AtomicFiles.createPrivateDirectories(Path.of(settings.stateDir()));
    lockChannel =
        FileChannel.open(
            state.resolve("agent.lock"),
            java.util.Set.of(StandardOpenOption.CREATE, StandardOpenOption.WRITE),
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    lock = lockChannel.tryLock();
    if (lock == null) {
      lockChannel.close();
      throw new IOException("another agent uses " + state + " (state_dir must be one per agent)");
    }
    shipper =
        new Shipper(
            settings.kafka(),
            new DeadLetters(state.resolve("dead-letters"), settings.deadLetterMaxBytes(), clock));
    agent = new Agent(settings, shipper, clock);
    spool =
        new DiskSpool(
            state.resolve("spool"), settings.spoolMaxBytes(), settings.spoolSegmentBytes());
    spooled = new SpoolingOutput(spool, 100);
    forwarder = new SpoolForwarder(spool, shipper, 20_000);
  }

  public void start(boolean stdin) throws IOException {
    startHttp(); // first: /healthz answers while the sources start
    start(forwarder, "spool", false);
    adoptRunSpools();
    // lookups (scontrol, sidecars, /proc, the kubelet, nvidia-smi) run on their own threads; open
    // waits at most a second for the first answers, so a wedged GPU's nvidia-smi holds nothing
    attribution = AttributionSources.open(settings, clock);
    agent.attributeFiles(attribution.chain());
    if (attribution.followed() != null) {
      agent.alsoFollow(attribution.followed()); // slurm.follow_sidecar_paths
    }
    start(agent, "files", false);
    PciMap pci = settings.kernelLog() == null ? null : PciMap.ask(settings.nvidiaSmi(), smiHealth);
    if (settings.kernelLog() != null && isKmsg(Path.of(settings.kernelLog()))) {
      try {
        BootInfo boot = BootInfo.read(Path.of(settings.procDir()));
        // an Xid's pid=N names the process: its environment names its job, rank and GPU
        pidJoin = KernelPidJoin.forNode(Path.of(settings.procDir()), attribution.inventory());
        kernel =
            new KernelLogSource(
                Path.of(settings.kernelLog()),
                boot,
                Path.of(settings.stateDir(), "kernel"),
                settings.host(),
                pci::current,
                pidJoin,
                this::spoolKernel,
                clock);
        KernelLogSource k = kernel;
        start(
            () -> {
              pci.await(START_WAIT); // an Xid read before the map ships without its GPU index
              k.run();
            },
            "kmsg",
            false);
      } catch (IOException e) {
        // without the boot id kernel records cannot be named: the rest of the agent still runs
        health.died("kmsg", "cannot read the boot id under " + settings.procDir() + ": " + e);
      }
    } else if (settings.kernelLog() != null) {
      agent.followKernelLog(Path.of(settings.kernelLog()), pci::current);
    }
    if (settings.gpuSampleIntervalMs() > 0) {
      sampler =
          new GpuMemorySampler(
              settings.nvidiaSmi(),
              settings.gpuSampleIntervalMs(),
              settings.host(),
              this::stream,
              clock,
              clock.getZone(),
              smiHealth);
      start(sampler, "nvidia-smi", false);
    }
    if (stdin) {
      start(pump(System.in, "stdin"), "stdin", true);
    }
  }

  private void startHttp() throws IOException {
    if (settings.httpPort() >= 0) {
      AgentMetrics metrics = new AgentMetrics(agent, shipper, spool, streamLines::get);
      metrics.register(this);
      metrics.attribution(() -> attribution == null ? null : attribution.counters());
      http =
          new AgentEndpoint(
              settings.httpHost(),
              settings.httpPort(),
              dev.cudawatch.common.http.WebConfig.load(settings.webConfigFile()),
              metrics.registry(),
              () -> {
                Map<String, String> problems = problems();
                return new AgentEndpoint.Health(problems.isEmpty(), healthJson(problems));
              });
    }
  }

  /**
   * {@code /dev/kmsg}, or a pipe, device or file named {@code kmsg} in its record format; any other
   * kernel log (a dmesg or journal file) is followed as a file.
   */
  static boolean isKmsg(Path p) {
    if (p.getFileName() != null && p.getFileName().toString().equals("kmsg")) {
      return true;
    }
    try {
      return Files.readAttributes(p, java.nio.file.attribute.BasicFileAttributes.class).isOther();
    } catch (IOException e) {
      return false;
    }
  }

  /** What makes the agent unhealthy now, by source; empty when it is healthy. */
  public Map<String, String> problems() {
    Map<String, String> out = new java.util.TreeMap<>(health.deadSources());
    String spoolError = spool.writeError();
    if (spoolError != null) {
      out.put("spool", "cannot write: " + spoolError);
    }
    return out;
  }

  private String healthJson(Map<String, String> problems) {
    var n = dev.cudawatch.common.wire.WireJson.mapper().createObjectNode();
    n.put("status", problems.isEmpty() ? "ok" : "unhealthy");
    var p = n.putObject("problems");
    problems.forEach(p::put);
    // a warning, not a failure: a hung nvidia-smi is the GPU's trouble, and restarting the agent
    // (what a failed liveness probe does) would not help it
    var w = n.putObject("warnings");
    if (smiHealth.warning() != null) {
      w.put("nvidia-smi", smiHealth.warning());
    }
    n.put("open_files", agent.tailer().openFiles());
    n.put("idle_files", agent.tailer().idleFiles());
    n.put("spool_bytes", spool.totalBytes());
    return n.toString();
  }

  /**
   * Ships what {@code cudawatch run} left spooled when Kafka was unreachable: one long-running
   * source that looks again every few seconds (runs end while the agent runs) and moves finished
   * runs' spools into this agent's spool (see {@link RunSpoolAdoption}).
   */
  private void adoptRunSpools() {
    runSpools =
        new RunSpoolAdoption(
            RunSpoolAdoption.roots(settings.runSpoolRoot(), settings.stateDir()),
            settings.host(),
            spooled,
            clock,
            java.time.Duration.ofSeconds(2),
            java.time.Duration.ofMinutes(10),
            16);
    start(runSpools, "run-spools", false);
  }

  /** The run-spool handoff (its counts for /metrics). */
  RunSpoolAdoption runSpools() {
    return runSpools;
  }

  /** A pump that turns a byte stream into records of this node, through the spool. */
  public StreamPump pump(InputStream in, String name) {
    String runId = Long.toString(clock.millis(), 36);
    return new StreamPump(
        in,
        null,
        settings.maxLineBytes(),
        l ->
            LogRecord.builder().host(settings.host()).job(settings.job()).stream(name)
                .source(name)
                .sourceId(runId)
                .offset(l.start())
                .eventTime(clock.instant())
                .text(l.text())
                .build(),
        this::stream);
  }

  /**
   * Spools a record of a stream source. A spool that cannot be written (a full disk) loses the
   * record, counted, and makes /healthz unhealthy; the source thread keeps running.
   */
  /** The GPU memory sampler, or null when sampling is off. */
  GpuMemorySampler gpuSampler() {
    return sampler;
  }

  private void stream(LogRecord r) {
    streamLines.incrementAndGet();
    try {
      spooled.write(r);
    } catch (RuntimeException e) {
      spoolErrors.incrementAndGet();
    }
  }

  /**
   * Spools a kernel record or throws: the kernel source offers it again and its cursor never passes
   * a record that is not on disk.
   */
  private void spoolKernel(LogRecord r) {
    spooled.write(r);
    streamLines.incrementAndGet();
  }

  /** How the agent's nvidia-smi calls fare (timeouts). */
  NvidiaSmiHealth nvidiaSmiHealth() {
    return smiHealth;
  }

  /** Records of stream sources lost because the spool could not be written. */
  public long spoolErrors() {
    return spoolErrors.get();
  }

  public KernelLogSource kernelSource() {
    return kernel;
  }

  private void start(Runnable r, String name, boolean mayFinish) {
    health.start(name, r, mayFinish);
  }

  public int httpPort() {
    return http == null ? -1 : http.port();
  }

  public Agent agent() {
    return agent;
  }

  public DiskSpool spool() {
    return spool;
  }

  /**
   * Stops within a few seconds whatever the broker does: sources stop; the loops that send are
   * given {@link #LOOPS_STOP} to end their round; the producer then has {@link #PRODUCER_CLOSE} to
   * deliver what it holds, fails the rest and wakes a loop blocked on a broker that is away. Only
   * acknowledged records move a position or the spool's cursor, so what was in flight is read again
   * at the next start (at least once, never lost). Nothing sends after the producer closed.
   */
  @Override
  public void close() throws IOException {
    health.stopping();
    if (kernel != null) {
      kernel.stop();
    }
    if (sampler != null) {
      sampler.stop();
    }
    if (runSpools != null) {
      runSpools.stop(); // an adoption cut short leaves the run's spool for the next start
    }
    forwarder.stop(java.time.Duration.ZERO); // told at once; both end within the same wait
    agent.stop(LOOPS_STOP);
    forwarder.stop(java.time.Duration.ofMillis(100));
    // every step runs even if one fails (a full disk fails the checkpoint): the broker connection,
    // the port and the lock are released; the first failure is reported
    IOException first = null;
    for (Closer c :
        List.<Closer>of(
            () -> shipper.close(PRODUCER_CLOSE),
            spooled::sync,
            agent::close,
            forwarder::close,
            spool::close,
            () -> {
              if (http != null) {
                http.close();
              }
            },
            () -> {
              if (attribution != null) {
                attribution.close();
              }
              if (pidJoin != null) {
                pidJoin.close();
              }
            },
            lock::release,
            lockChannel::close)) {
      try {
        c.close();
      } catch (IOException | RuntimeException e) {
        if (first == null) {
          first = e instanceof IOException io ? io : new IOException(e);
        }
      }
    }
    if (first != null) {
      throw first;
    }
  }

  private interface Closer {
    void close() throws IOException;
  }
}
