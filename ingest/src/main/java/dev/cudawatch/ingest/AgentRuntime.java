package dev.cudawatch.ingest;

import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.ingest.ship.Shipper;
import dev.cudawatch.ingest.spool.DiskSpool;
import dev.cudawatch.ingest.spool.SpoolForwarder;
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
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The agent process: the file follower, plus the stream sources (stdin, the kernel log, GPU memory
 * samples) that go through the disk spool, the spool's forwarder, and /metrics + /healthz.
 */
public final class AgentRuntime implements AutoCloseable {
  private final AgentSettings settings;
  private final Clock clock;
  private final Shipper shipper;
  private final Agent agent;
  private final DiskSpool spool;
  private final SpoolingOutput spooled;
  private final SpoolForwarder forwarder;
  private final FileChannel lockChannel;
  private final FileLock lock;
  private final List<Thread> threads = new ArrayList<>();
  private final AtomicLong streamLines = new AtomicLong();
  private KernelLogSource kernel;
  private GpuMemorySampler sampler;
  private HTTPServer http;

  public AgentRuntime(AgentSettings settings, Clock clock) throws IOException {
    this.settings = settings;
    this.clock = clock;
    Path state = Files.createDirectories(Path.of(settings.stateDir()));
    lockChannel =
        FileChannel.open(
            state.resolve("agent.lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
    lock = lockChannel.tryLock();
    if (lock == null) {
      lockChannel.close();
      throw new IOException("another agent uses " + state + " (state_dir must be one per agent)");
    }
    shipper = new Shipper(settings.kafka());
    agent = new Agent(settings, shipper, clock);
    spool =
        new DiskSpool(
            state.resolve("spool"), settings.spoolMaxBytes(), settings.spoolSegmentBytes());
    spooled = new SpoolingOutput(spool, 100);
    forwarder = new SpoolForwarder(spool, shipper, 20_000);
  }

  public void start(boolean stdin) throws IOException {
    start(forwarder, "cudawatch-spool");
    adoptRunSpools();
    if (Files.isDirectory(Path.of("/proc/self/fd"))) {
      // a followed log's lines take the job, rank and GPU of the process writing it
      agent.attributeFiles(
          new dev.cudawatch.ingest.attribution.FileAttribution(
              dev.cudawatch.ingest.attribution.ProcessScan.forNode(settings.nvidiaSmi()),
              clock,
              60_000));
    }
    start(agent, "cudawatch-files");
    Map<String, Integer> pci = PciMap.query(settings.nvidiaSmi());
    if ("/dev/kmsg".equals(settings.kernelLog())) {
      kernel =
          new KernelLogSource(
              Path.of(settings.kernelLog()), settings.host(), pci, this::stream, clock);
      start(kernel, "cudawatch-kmsg");
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
              clock);
      start(sampler, "cudawatch-nvidia-smi");
    }
    if (stdin) {
      start(pump(System.in, "stdin"), "cudawatch-stdin");
    }
    if (settings.httpPort() >= 0) {
      AgentMetrics metrics = new AgentMetrics(agent, shipper, spool, streamLines::get);
      http =
          HTTPServer.builder()
              .hostname(settings.httpHost())
              .port(settings.httpPort())
              .registry(metrics.registry())
              .defaultHandler(
                  ex -> {
                    byte[] b =
                        ("{\"status\":\"ok\",\"open_files\":"
                                + agent.tailer().openFiles()
                                + ",\"spool_bytes\":"
                                + spool.totalBytes()
                                + "}")
                            .getBytes(StandardCharsets.UTF_8);
                    ex.getResponseHeaders().set("Content-Type", "application/json");
                    ex.sendResponseHeaders(
                        ex.getRequestURI().getPath().equals("/healthz") ? 200 : 404, b.length);
                    ex.getResponseBody().write(b);
                    ex.close();
                  })
              .buildAndStart();
    }
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
      start(f, "cudawatch-spool-" + dir.getFileName());
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
          "cudawatch-spool-reaper");
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

  private void stream(LogRecord r) {
    streamLines.incrementAndGet();
    spooled.write(r);
  }

  private void start(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    t.start();
    threads.add(t);
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
    if (kernel != null) {
      kernel.stop();
    }
    if (sampler != null) {
      sampler.stop();
    }
    spooled.sync();
    agent.close();
    forwarder.close();
    shipper.close();
    spool.close();
    if (http != null) {
      http.close();
    }
    lock.release();
    lockChannel.close();
  }
}
