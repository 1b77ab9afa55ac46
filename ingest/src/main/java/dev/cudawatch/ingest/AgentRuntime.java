package dev.cudawatch.ingest;

import dev.cudawatch.common.io.AtomicFiles;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.ingest.ship.DeadLetters;
import dev.cudawatch.ingest.ship.Shipper;
import dev.cudawatch.ingest.spool.DiskSpool;
import dev.cudawatch.ingest.spool.SpoolForwarder;
import dev.cudawatch.ingest.streams.BootInfo;
import dev.cudawatch.ingest.streams.GpuMemorySampler;
import dev.cudawatch.ingest.streams.KernelLogSource;
import dev.cudawatch.ingest.streams.PciMap;
import dev.cudawatch.ingest.streams.SpoolingOutput;
import dev.cudawatch.ingest.streams.StreamPump;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
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
  private KernelLogSource kernel;
  private GpuMemorySampler sampler;
  private HTTPServer http;
  private AttributionSources attribution;

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
    start(forwarder, "spool", false);
    adoptRunSpools();
    attribution = AttributionSources.open(settings, clock);
    agent.attributeFiles(attribution.chain());
    if (attribution.followed() != null) {
      agent.alsoFollow(attribution.followed()); // slurm.follow_sidecar_paths
    }
    start(agent, "files", false);
    Map<String, Integer> pci = PciMap.query(settings.nvidiaSmi());
    if (settings.kernelLog() != null && isKmsg(Path.of(settings.kernelLog()))) {
      try {
        kernel =
            new KernelLogSource(
                Path.of(settings.kernelLog()),
                BootInfo.read(Path.of(settings.procDir())),
                Path.of(settings.stateDir(), "kernel"),
                settings.host(),
                pci,
                this::stream,
                clock);
        start(kernel, "kmsg", false);
      } catch (IOException e) {
        // without the boot id kernel records cannot be named: the rest of the agent still runs
        health.died("kmsg", "cannot read the boot id under " + settings.procDir() + ": " + e);
      }
    } else if (settings.kernelLog() != null) {
      agent.followKernelLog(Path.of(settings.kernelLog()), pci);
    }
    if (settings.gpuSampleIntervalMs() > 0) {
      sampler =
          new GpuMemorySampler(
              settings.nvidiaSmi(),
              settings.gpuSampleIntervalMs(),
              settings.host(),
              this::stream,
              clock,
              clock.getZone());
      start(sampler, "nvidia-smi", false);
    }
    if (stdin) {
      start(pump(System.in, "stdin"), "stdin", true);
    }
    if (settings.httpPort() >= 0) {
      AgentMetrics metrics = new AgentMetrics(agent, shipper, spool, streamLines::get);
      metrics.register(this);
      metrics.attribution(attribution.counters());
      http =
          HTTPServer.builder()
              .hostname(settings.httpHost())
              .port(settings.httpPort())
              .registry(metrics.registry())
              .defaultHandler(
                  ex -> {
                    boolean health = ex.getRequestURI().getPath().equals("/healthz");
                    Map<String, String> problems = problems();
                    byte[] b = healthJson(problems).getBytes(StandardCharsets.UTF_8);
                    ex.getResponseHeaders().set("Content-Type", "application/json");
                    ex.sendResponseHeaders(
                        !health ? 404 : problems.isEmpty() ? 200 : 503, b.length);
                    ex.getResponseBody().write(b);
                    ex.close();
                  })
              .buildAndStart();
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
    n.put("open_files", agent.tailer().openFiles());
    n.put("idle_files", agent.tailer().idleFiles());
    n.put("spool_bytes", spool.totalBytes());
    return n.toString();
  }

  /**
   * Ships what {@code cudawatch run} left spooled when Kafka was unreachable, then deletes each
   * spool once it is empty.
   */
  private void adoptRunSpools() throws IOException {
    List<Path> dirs = dev.cudawatch.ingest.run.RunSpools.all(Path.of(settings.runSpoolRoot()));
    for (Path dir : dirs) {
      DiskSpool left = new DiskSpool(dir, settings.spoolMaxBytes(), settings.spoolSegmentBytes());
      SpoolForwarder f = new SpoolForwarder(left, shipper, 20_000);
      start(f, "spool-" + dir.getFileName(), false);
      start(
          () -> {
            try {
              while (left.hasUnread() || f.inFlight() > 0) {
                Thread.sleep(200);
              }
              f.close();
              left.close();
              RunMain.deleteTree(dir);
            } catch (IOException e) {
              org.slf4j.LoggerFactory.getLogger(AgentRuntime.class)
                  .warn("run spool {}: {}", dir, e.toString());
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          },
          "spool-reaper-" + dir.getFileName(),
          true);
    }
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
    return http == null ? -1 : http.getPort();
  }

  public Agent agent() {
    return agent;
  }

  public DiskSpool spool() {
    return spool;
  }

  @Override
  public void close() throws IOException {
    health.stopping();
    if (kernel != null) {
      kernel.stop();
    }
    if (sampler != null) {
      sampler.stop();
    }
    // every step runs even if one fails (a full disk fails the checkpoint): the broker connection,
    // the port and the lock are released; the first failure is reported
    IOException first = null;
    for (Closer c :
        List.<Closer>of(
            spooled::sync,
            agent::close,
            forwarder::close,
            shipper::close,
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
