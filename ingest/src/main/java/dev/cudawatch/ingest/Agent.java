package dev.cudawatch.ingest;

import dev.cudawatch.common.gpu.NvidiaSmiCsv;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.ingest.files.FileTailer;
import dev.cudawatch.ingest.files.LineSink;
import dev.cudawatch.ingest.files.PositionStore;
import dev.cudawatch.ingest.files.TailedFile;
import dev.cudawatch.ingest.framing.FramedLine;
import dev.cudawatch.ingest.framing.LineFramer;
import dev.cudawatch.ingest.lifecycle.StoppableSource;
import dev.cudawatch.ingest.ship.Shipper;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node agent: follows training logs and ships every line to Kafka, checkpointing how far the
 * broker has acknowledged. {@link #pollOnce} does one round; {@link #run} repeats it until closed,
 * so tests drive rounds themselves instead of sleeping.
 */
public final class Agent implements StoppableSource, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Agent.class);

  private static final long LOOP_STOP_MS = 10_000;

  private final AgentSettings settings;
  private final Shipper shipper;
  private final FileTailer tailer;
  private final PositionStore positions;
  private final Clock clock;
  private final AtomicLong linesRead = new AtomicLong();
  private final AtomicLong truncatedLines = new AtomicLong();
  private final AtomicLong quietMarkers = new AtomicLong();

  /** Where the followed files' lines and quiet markers go. */
  private final LineSink fileSink =
      new LineSink() {
        @Override
        public void line(TailedFile f, FramedLine l, Runnable onAck, Runnable onFailure) {
          ship(f, l, onAck, onFailure);
        }

        @Override
        public void quiet(TailedFile f, long end, String stream) {
          shipQuiet(f, end, stream);
        }
      };

  private long lastCheckpoint;
  private FileTailer kernelTailer;
  private PositionStore kernelPositions;

  /** The thread running {@link #run}, which close() stops and joins before the last checkpoint. */
  private volatile Thread loop;

  private java.util.function.Supplier<java.util.Map<String, Integer>> pciToGpu = java.util.Map::of;
  // set once the attribution sources are open, which may be after the loop started
  private volatile dev.cudawatch.ingest.attribution.FileSource files;
  private volatile boolean running = true;
  private volatile boolean started;

  public Agent(AgentSettings settings, Shipper shipper, Clock clock) throws IOException {
    this.settings = settings;
    this.shipper = shipper;
    this.clock = clock;
    this.positions = new PositionStore(Path.of(settings.stateDir()));
    this.tailer =
        FileTailer.builder()
            .globs(FileGlob.paths(settings.files(), null))
            .criGlobs(FileGlob.paths(settings.files(), FileGlob.Format.CRI))
            .positions(positions.load())
            .maxLineBytes(settings.maxLineBytes())
            .readBudget(settings.readBudgetBytes())
            .closeInactiveMs(settings.closeInactiveMs())
            .scanIntervalMs(settings.scanIntervalMs())
            .quietMarkerMs(settings.quietMarkerMs())
            .build();
  }

  /**
   * Attributes each followed file's lines to a job, rank and GPU through the node's sources (Slurm,
   * Kubernetes, the process writing it): see {@link
   * dev.cudawatch.ingest.attribution.AttributionChain}.
   */
  public void attributeFiles(dev.cudawatch.ingest.attribution.FileSource attribution) {
    this.files = attribution;
  }

  /** Follows these paths too (asked at each scan, never blocking): see FileTailer#alsoFollow. */
  public void alsoFollow(
      java.util.function.Supplier<? extends java.util.Collection<String>> paths) {
    tailer.alsoFollow(paths);
  }

  /** Follows a kernel log file (dmesg or journal export) too, keeping its NVRM and OOM lines. */
  public void followKernelLog(Path file, java.util.Map<String, Integer> pciToGpu)
      throws IOException {
    followKernelLog(file, () -> pciToGpu);
  }

  /** As above, with a PCI map that may arrive later (nvidia-smi answers off the start path). */
  public void followKernelLog(
      Path file, java.util.function.Supplier<java.util.Map<String, Integer>> pciToGpu)
      throws IOException {
    this.pciToGpu = pciToGpu;
    this.kernelPositions = new PositionStore(Path.of(settings.stateDir(), "kernel"));
    this.kernelTailer =
        FileTailer.builder()
            .globs(List.of(file.toString()))
            .positions(kernelPositions.load())
            .maxLineBytes(settings.maxLineBytes())
            .readBudget(settings.readBudgetBytes())
            .build();
  }

  /** One round: read what was appended, ship it, checkpoint when due. Returns bytes read. */
  public long pollOnce() throws IOException {
    long n = tailer.poll(fileSink);
    if (kernelTailer != null) {
      n += kernelTailer.poll(this::shipKernel);
    }
    long now = clock.millis();
    // a clock set back (NTP, a shifted VM clock) must not stop checkpoints until it catches up
    if (now - lastCheckpoint >= settings.checkpointIntervalMs() || now < lastCheckpoint) {
      checkpoint();
      lastCheckpoint = now;
    }
    return n;
  }

  /**
   * Writes the acknowledged positions now. One checkpoint at a time: the loop's and close()'s must
   * not interleave, or an older snapshot could be renamed over a newer one.
   */
  public synchronized void checkpoint() throws IOException {
    positions.save(tailer.positions());
    if (kernelTailer != null) {
      kernelPositions.save(kernelTailer.positions());
    }
  }

  private void shipKernel(TailedFile f, FramedLine l, Runnable onAck, Runnable onFailure) {
    if (!dev.cudawatch.ingest.streams.KernelLogSource.relevant(l.text())) {
      onAck.run(); // nothing to ship: the position may pass it
      return;
    }
    LogRecord r = record(f.path().toString(), f.sourceId(), l, RecordKind.KERNEL, "kmsg");
    Integer gpu = dev.cudawatch.ingest.streams.PciMap.gpuOf(l.text(), pciToGpu.get());
    shipper.send(
        gpu == null ? r : r.withGpu(gpu, null, "kernel line's PCI address"), onAck, onFailure);
  }

  private void ship(TailedFile f, FramedLine l, Runnable onAck, Runnable onFailure) {
    linesRead.incrementAndGet();
    if (l.truncated()) {
      truncatedLines.incrementAndGet();
    }
    shipper.send(fileRecord(f, l).build(), onAck, onFailure);
  }

  /**
   * Tells the processor the file's writer paused after {@code end}: its open incidents are
   * complete. A lost marker costs only time (the processor's own flush timer closes them), so its
   * acknowledgement moves no position.
   */
  private void shipQuiet(TailedFile f, long end, String stream) {
    quietMarkers.incrementAndGet();
    FramedLine none = new FramedLine(end, end, "", false, null, stream, null);
    shipper.send(fileRecord(f, none).build().quietAt(end, clock.instant()), () -> {});
  }

  /**
   * A followed file's line with what the process writing the file tells (job, rank, GPU and
   * whence), built once: the agent's busiest path.
   */
  private LogRecord.Builder fileRecord(TailedFile f, FramedLine l) {
    String source = f.path().toString();
    LogRecord.Builder b = builder(source, f.sourceId(), l, RecordKind.LOG, "file");
    var attribution = files; // read the volatile once
    if (attribution != null) {
      var a = attribution.of(source);
      if (a.job() != null) {
        b.job(a.job());
      }
      b.rank(a.rank())
          .localRank(a.localRank())
          .gpu(a.gpu())
          .gpuUuid(a.gpuUuid())
          .attribution(a.attribution());
    }
    return b;
  }

  private LogRecord record(
      String source, String sourceId, FramedLine l, RecordKind kind, String stream) {
    return builder(source, sourceId, l, kind, stream).build();
  }

  private LogRecord.Builder builder(
      String source, String sourceId, FramedLine l, RecordKind kind, String stream) {
    var now = clock.instant();
    // a container log's line carries its stream and the runtime's time of writing
    return LogRecord.builder().host(settings.host()).job(settings.job()).kind(kind).stream(
            l.stream() != null ? l.stream() : stream)
        .source(source)
        .sourceId(sourceId)
        .offset(l.start())
        .eventTime(l.time() != null ? l.time() : now)
        .ingestTime(now)
        .text(l.text())
        .raw(settings.keepRaw() ? l.raw() : null);
  }

  /**
   * Reads {@code file} through the agent's own path for a followed file (tailing, framing,
   * decoding, attribution, the record and its JSON) and ships nothing: run before the agent starts,
   * it has the JIT compile that path before the first real line, which otherwise meets it cold
   * while the job and the broker warm up too. Returns the lines read.
   */
  public long warmUp(Path file) throws IOException {
    long[] lines = {0};
    long[] bytes = {0};
    LineSink discard =
        (f, l, onAck, onFailure) -> {
          LogRecord r = fileRecord(f, l).build();
          bytes[0] += r.streamKey().length() + WireJson.toBytes(r).length;
          lines[0]++;
        };
    try (FileTailer t =
        FileTailer.builder()
            .globs(List.of(file.toString()))
            .maxLineBytes(settings.maxLineBytes())
            .readBudget(settings.readBudgetBytes())
            .build()) {
      while (t.poll(discard) > 0) {
        // every round reads a share of the file, as the agent's own rounds do
      }
    }
    LOG.debug("warm-up: {} lines, {} bytes of records", lines[0], bytes[0]);
    return lines[0];
  }

  /**
   * Ships every file of {@code dir} once, from the start (a replay of past logs): nvidia-smi CSV
   * files as GPU memory samples, kernel logs (dmesg, kern, journal) as kernel lines, the rest as
   * training output. Returns the records sent.
   */
  public long replay(Path dir) throws IOException {
    List<Path> files;
    try (Stream<Path> s = Files.list(dir)) {
      files =
          s.filter(f -> Files.isRegularFile(f, java.nio.file.LinkOption.NOFOLLOW_LINKS))
              .sorted()
              .toList();
    }
    long n = 0;
    for (Path p : files) {
      n += replayFile(p);
    }
    shipper.flush();
    return n;
  }

  private long replayFile(Path p) throws IOException {
    String name = p.getFileName().toString().toLowerCase(Locale.ROOT);
    if (name.endsWith(".jsonl") || name.endsWith(".md") || name.endsWith(".golden")) {
      return 0; // labels and notes beside sample logs are not logs
    }
    boolean kernel = name.contains("dmesg") || name.contains("kern") || name.contains("journal");
    AtomicLong count = new AtomicLong();
    NvidiaSmiCsv[] csv = {null};
    LineFramer framer = new LineFramer(settings.maxLineBytes(), true, 0);
    String source = p.toAbsolutePath().toString();
    java.util.function.Consumer<FramedLine> sink =
        l -> {
          if (l.start() == 0 && name.endsWith(".csv") && NvidiaSmiCsv.isHeader(l.text())) {
            csv[0] = NvidiaSmiCsv.fromHeader(l.text(), clock.getZone()).orElse(null);
            return;
          }
          if (csv[0] != null) {
            Optional<String> row = csv[0].parse(l.text()).map(NvidiaSmiCsv::toAgentRow);
            row.ifPresent(
                r ->
                    shipper.send(
                        record(
                            source,
                            "replay",
                            new FramedLine(l.start(), l.end(), r, false),
                            RecordKind.GPU_MEMORY,
                            "nvidia-smi"),
                        () -> {}));
          } else {
            shipper.send(
                record(
                    source,
                    "replay",
                    l,
                    kernel ? RecordKind.KERNEL : RecordKind.LOG,
                    kernel ? "kmsg" : "file"),
                () -> {});
          }
          count.incrementAndGet();
        };
    try (InputStream in = Files.newInputStream(p)) {
      byte[] buf = new byte[64 * 1024];
      for (int r; (r = in.read(buf)) > 0; ) {
        framer.feed(buf, 0, r, sink);
      }
      framer.flush(sink);
    }
    return count.get();
  }

  @Override
  public void run() {
    loop = Thread.currentThread();
    started = true;
    while (running) {
      try {
        if (pollOnce() == 0) {
          Thread.sleep(settings.pollIntervalMs());
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (IOException | RuntimeException e) {
        if (!running) {
          return; // a send woken by the shipper closing at shutdown: its line is read again
        }
        LOG.warn("agent round failed: {}", e.toString());
      }
    }
  }

  @Override
  public boolean stopRequested() {
    return !running;
  }

  /**
   * Tells the loop to stop and waits up to {@code timeout} for its round to end; false if it is
   * still in one (blocked sending to a broker that is away: closing the shipper wakes it).
   */
  public boolean stop(java.time.Duration timeout) {
    running = false;
    Thread t = loop;
    if (t == null || t == Thread.currentThread()) {
      return true;
    }
    try {
      if (!timeout.isZero()) {
        t.join(timeout.toMillis());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return !t.isAlive();
  }

  private void stopLoop() {
    Thread t = loop;
    if (t == null || t == Thread.currentThread()) {
      return;
    }
    try {
      t.join(LOOP_STOP_MS); // a round ends within one poll interval or one read budget
      if (t.isAlive()) {
        t.interrupt(); // blocked on a broker that is gone: the positions wait for acks anyway
        t.join(LOOP_STOP_MS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  public boolean started() {
    return started;
  }

  public long linesRead() {
    return linesRead.get();
  }

  public long truncatedLines() {
    return truncatedLines.get();
  }

  /** Quiet markers shipped: files whose writer paused after lines ({@code quiet_marker_ms}). */
  public long quietMarkers() {
    return quietMarkers.get();
  }

  public FileTailer tailer() {
    return tailer;
  }

  public Shipper shipper() {
    return shipper;
  }

  /**
   * Stops the loop and waits for it to finish its round, waits for the broker to acknowledge what
   * was sent, then writes the last checkpoint: after the loop's last one, never beside it.
   */
  @Override
  public void close() throws IOException {
    running = false;
    stopLoop();
    shipper.flush();
    checkpoint();
    tailer.close();
    if (kernelTailer != null) {
      kernelTailer.close();
    }
  }
}
