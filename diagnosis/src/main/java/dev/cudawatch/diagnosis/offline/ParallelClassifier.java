package dev.cudawatch.diagnosis.offline;

import dev.cudawatch.common.gpu.NvidiaSmiCsv;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.diagnosis.catalog.Catalog;
import dev.cudawatch.diagnosis.engine.BigramFilter;
import dev.cudawatch.diagnosis.engine.ClassifierSettings;
import dev.cudawatch.diagnosis.engine.LineNormalizer;
import dev.cudawatch.diagnosis.engine.LinePrefilter;
import dev.cudawatch.diagnosis.engine.PrefilterLiterals;
import dev.cudawatch.diagnosis.engine.PreparedLine;
import dev.cudawatch.diagnosis.engine.StreamClassifier;
import dev.cudawatch.diagnosis.engine.StreamContext;
import dev.cudawatch.diagnosis.engine.StreamState;
import dev.cudawatch.diagnosis.trend.TrendSettings;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Consumer;
import java.util.function.LongConsumer;

/**
 * Classifies many files, and large files in chunks, on a fixed pool of threads, with the same
 * incidents, order and line numbers as {@link OfflineClassifier} on each file in turn. A large
 * file's chunks are read and prefiltered in parallel ({@link ChunkScanner}); only the lines the
 * prefilter flags go through the file's one {@link StreamClassifier}, in order, on the calling
 * thread, while the lines between them are only counted (or replayed, inside a diff hunk). Small
 * files are classified whole, one per thread. Results reach the listener in the files' order.
 */
public final class ParallelClassifier implements AutoCloseable {
  /** Chunk size for large files: big enough to amortise a task, small enough to share out. */
  public static final int DEFAULT_CHUNK_BYTES = 4 << 20;

  /** Bytes of a large file's start whose byte pairs rank each literal's pairs (BigramFilter). */
  private static final int SAMPLE_BYTES = 64 << 10;

  /** Bytes read past a chunk's end to finish its last line; longer lines are read alone. */
  private static final int DEFAULT_TAIL_BYTES = 1 << 16;

  /** Receives each file's outcome, in the files' order, on the thread of {@link #classifyAll}. */
  public interface Listener {
    /** A file's classification starts; returns where its progress (bytes) goes. */
    LongConsumer started(String file, long size);

    void done(String file, List<Incident> incidents);

    /**
     * Some of a large file's incidents, as they settle, before {@link #done} gives them all in
     * order: a report may prepare their output while the file is still being read.
     */
    default void settled(String file, List<Incident> incidents) {}

    void failed(String file, Exception error);
  }

  private final CompletableFuture<Catalog> catalogSource;
  private Catalog catalog;
  private final ClassifierSettings settings;
  private final TrendSettings trendSettings;
  private final Clock clock;
  private final int threads;
  private final int chunkBytes;
  private final int tailBytes;
  private LinePrefilter prefilter;
  // two locks: workers take the prefilter while the main thread may be waiting for the catalog
  private final Object prefilterLock = new Object();
  private final Object catalogLock = new Object();
  private final ExecutorService pool;
  private OfflineClassifier offline;
  private final ThreadLocal<ChunkScanner> scanners;
  private final ThreadLocal<OfflineClassifier> offlines;

  /** A classifier of {@code catalog}; the builder's defaults are those of the classify command. */
  public static Builder builder(Catalog catalog) {
    Builder b = new Builder(CompletableFuture.completedFuture(catalog), null);
    b.catalog = catalog;
    return b;
  }

  /**
   * A classifier of the built-in catalog that starts reading large files before the catalog has
   * loaded: the prefilter's literals were listed at build time ({@link PrefilterLiterals}), so the
   * workers scan while {@code builtIn} is still parsing, and only the flagged lines wait for it.
   *
   * @param builtIn the built-in catalog, loading on another thread
   */
  public static Builder ofBuiltIn(CompletableFuture<Catalog> builtIn) {
    return new Builder(builtIn, PrefilterLiterals.builtIn());
  }

  /** Settings of a {@link ParallelClassifier}; every one has a default. */
  public static final class Builder {
    private final CompletableFuture<Catalog> catalogSource;
    private final List<String> literals;
    private Catalog catalog;
    private ClassifierSettings settings = ClassifierSettings.defaults();
    private TrendSettings trendSettings = TrendSettings.defaults();
    private Clock clock = Clock.systemDefaultZone();
    private int threads = 1;
    private int chunkBytes = DEFAULT_CHUNK_BYTES;
    private int tailBytes = DEFAULT_TAIL_BYTES;

    private Builder(CompletableFuture<Catalog> catalogSource, List<String> literals) {
      this.catalogSource = catalogSource;
      this.literals = literals;
    }

    public Builder settings(ClassifierSettings settings) {
      this.settings = settings;
      return this;
    }

    public Builder trendSettings(TrendSettings trendSettings) {
      this.trendSettings = trendSettings;
      return this;
    }

    /** The clock of detected times; nvidia-smi CSVs' local times are read in its zone. */
    public Builder clock(Clock clock) {
      this.clock = clock;
      return this;
    }

    /** Worker threads; 1 classifies every file in turn on the calling thread. */
    public Builder threads(int threads) {
      this.threads = threads;
      return this;
    }

    /** Files larger than this are split into chunks of this size. */
    public Builder chunkBytes(int chunkBytes) {
      this.chunkBytes = chunkBytes;
      return this;
    }

    /** Bytes read past a chunk to finish its last line (tests make it small). */
    public Builder tailBytes(int tailBytes) {
      this.tailBytes = tailBytes;
      return this;
    }

    public ParallelClassifier build() {
      return new ParallelClassifier(this);
    }
  }

  private ParallelClassifier(Builder b) {
    this.catalogSource = b.catalogSource;
    this.catalog = b.catalog;
    this.settings = b.settings;
    this.trendSettings = b.trendSettings;
    this.clock = b.clock;
    this.threads = b.threads;
    this.chunkBytes = b.chunkBytes;
    this.tailBytes = b.tailBytes;
    if (b.literals != null) {
      this.prefilter = new LinePrefilter(b.literals);
    }
    if (threads < 1 || chunkBytes < 1 || tailBytes < 1) {
      throw new IllegalArgumentException("threads, chunk and tail sizes must be positive");
    }
    this.pool =
        threads > 1
            ? Executors.newFixedThreadPool(
                threads,
                r -> {
                  Thread t = new Thread(r, "classify");
                  t.setDaemon(true);
                  return t;
                })
            : null;
    this.scanners =
        ThreadLocal.withInitial(() -> new ChunkScanner(prefilter(), LineNormalizer.MAX_LINE_CHARS));
    this.offlines = ThreadLocal.withInitial(this::newOffline);
  }

  /** Built on the first chunk: a run of small files never needs it (start-up time). */
  private LinePrefilter prefilter() {
    synchronized (prefilterLock) {
      if (prefilter == null) {
        prefilter = new LinePrefilter(catalog());
      }
      return prefilter;
    }
  }

  /** The catalog, waiting for it if it is still loading. */
  private Catalog catalog() {
    synchronized (catalogLock) {
      if (catalog == null) {
        try {
          catalog = catalogSource.join();
        } catch (CompletionException e) {
          if (e.getCause() instanceof RuntimeException re) {
            throw re;
          }
          if (e.getCause() instanceof Error er) {
            throw er;
          }
          throw e;
        }
      }
      return catalog;
    }
  }

  /** The calling thread's classifier of whole streams, made when first needed. */
  private OfflineClassifier offline() {
    if (offline == null) {
      offline = newOffline();
    }
    return offline;
  }

  private OfflineClassifier newOffline() {
    return new OfflineClassifier(catalog(), settings, trendSettings, clock);
  }

  /**
   * Classifies {@code files} ('-' reads {@code stdin}) and tells the listener about each in order.
   */
  public void classifyAll(List<String> files, InputStream stdin, Listener listener) {
    List<Job> jobs = new ArrayList<>(files.size());
    for (String f : files) {
      jobs.add(new Job(f));
    }
    // a unit in flight holds a chunk's flagged lines only (the read buffer is the thread's)
    Window window = new Window(jobs, threads * 8);
    for (Job job : jobs) {
      window.topUp();
      try {
        if (job.stdin) {
          LongConsumer progress = listener.started(job.name, -1);
          listener.done(job.name, classify(LogInput.of(stdin), job.name, offline(), progress));
        } else if (pool == null) {
          listener.done(job.name, inTurn(job.name, listener));
        } else if (job.chunks == 0) {
          listener.started(job.name, job.size);
          List<Incident> incidents = window.take(job);
          listener.done(job.name, incidents);
        } else {
          LongConsumer progress = listener.started(job.name, job.size);
          listener.done(
              job.name, grouped(job, window, progress, s -> listener.settled(job.name, s)));
        }
      } catch (CorruptLogException e) {
        // what was read before the bad data is reported, then the error
        if (!e.incidents().isEmpty()) {
          listener.done(job.name, e.incidents());
        }
        listener.failed(job.name, e);
      } catch (IOException | RuntimeException e) {
        listener.failed(job.name, e);
      } finally {
        window.drop(job);
        job.close();
      }
    }
  }

  /** The single-threaded path: one file read in turn, as before there was a pool. */
  private List<Incident> inTurn(String name, Listener listener) throws IOException {
    Path path = Path.of(name);
    try (LogInput in = LogInput.open(path)) {
      LongConsumer progress = listener.started(name, Files.size(path));
      return classify(in, name, offline(), progress);
    }
  }

  /**
   * Classifies a whole input; a compressed one's progress counts the file's (compressed) bytes, so
   * it ends at the file's size.
   */
  private static List<Incident> classify(
      LogInput in, String name, OfflineClassifier classifier, LongConsumer progress)
      throws IOException {
    try (in) {
      LongConsumer p =
          progress == null || in.format() == LogInput.Format.PLAIN
              ? progress
              : chars -> progress.accept(in.bytesRead());
      List<Incident> incidents = classifier.classify(in.text(), name, p);
      in.failIfCorrupt(incidents);
      return incidents;
    }
  }

  /** Runs a large file's flagged lines through its stream classifier, chunk by chunk in order. */
  private List<Incident> grouped(
      Job job, Window window, LongConsumer progress, Consumer<List<Incident>> settled)
      throws IOException {
    FileChannel ch = job.channel;
    String first;
    String firstText; // an nvidia-smi -q report starts with a blank line
    try (LineReader lr =
        new LineReader(new ChunkScanner.Positional(ch, 0), LineNormalizer.MAX_LINE_CHARS)) {
      first = lr.next();
      firstText = first;
      for (int i = 0; firstText != null && firstText.isBlank() && i < 8; i++) {
        firstText = lr.next();
      }
    }
    // whole files, read as the offline classifier reads them: a memory CSV, an nvidia-smi -q report
    if ((first != null
            && NvidiaSmiCsv.isHeader(first)
            && NvidiaSmiCsv.fromHeader(first, clock.getZone()).isPresent())
        || (firstText != null && NvidiaSmiReport.isHeader(firstText))) {
      return offline().classify(new ChunkScanner.Positional(ch, 0), job.name, progress);
    }
    StreamClassifier sc =
        new StreamClassifier(
            catalog(),
            offline().advisor(),
            new StreamContext(null, null, job.name),
            settings,
            new StreamState());
    List<Incident> out = new ArrayList<>();
    long base = 0; // lines in the chunks before
    long resume = 0; // the offset of the line after the last one the classifier took
    int told = 0; // incidents passed to settled
    for (int c = 0; c < job.chunks; c++) {
      PreparedChunk chunk = window.take(job);
      ChunkScanner.Result r = chunk.scan();
      for (int i = 0; i < r.found(); i++) {
        long line = base + r.indexOf(i); // 0-based
        skip(sc, line - sc.state().lineNo(), ch, resume, out);
        out.addAll(sc.accept(chunk.lines()[i], null, clock.instant()));
        resume = r.next()[i];
      }
      base += r.lines();
      if (out.size() > told) {
        settled.accept(List.copyOf(out.subList(told, out.size())));
        told = out.size();
      }
      if (progress != null) {
        progress.accept(Math.min(job.size, (long) (c + 1) * chunkBytes));
      }
    }
    skip(sc, base - sc.state().lineNo(), ch, resume, out);
    out.addAll(sc.flush(clock.instant()));
    out.sort(Comparator.comparingLong(Incident::line));
    return out;
  }

  private ChunkScanner.Result scan(
      FileChannel ch, long size, long start, long end, BigramFilter bigrams) {
    try {
      return scanners.get().scan(ch, size, start, end, tailBytes, bigrams);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A chunk's flagged lines, with their stream-independent work done on the worker. */
  private record PreparedChunk(ChunkScanner.Result scan, PreparedLine[] lines) {}

  private PreparedChunk prepared(ChunkScanner.Result r, Catalog c) {
    PreparedLine[] lines = new PreparedLine[r.found()];
    for (int i = 0; i < lines.length; i++) {
      lines[i] = new PreparedLine(r.text()[i]).prepare(c);
    }
    return new PreparedChunk(r, lines);
  }

  /**
   * Passes {@code lines} unflagged lines starting at {@code offset}. They only count, except inside
   * a diff hunk, where each may end it: those are replayed until it ends.
   */
  private void skip(
      StreamClassifier sc, long lines, FileChannel ch, long offset, List<Incident> out)
      throws IOException {
    if (lines <= 0) {
      return;
    }
    if (sc.state().inDiffHunk()) {
      try (LineReader lr =
          new LineReader(new ChunkScanner.Positional(ch, offset), LineNormalizer.MAX_LINE_CHARS)) {
        while (lines > 0 && sc.state().inDiffHunk()) {
          String line = lr.next();
          if (line == null) {
            throw new IOException("file shrank while read");
          }
          out.addAll(sc.accept(line, null, clock.instant()));
          lines--;
        }
      }
    }
    sc.skipInert(lines);
  }

  @Override
  public void close() {
    if (pool != null) {
      pool.shutdownNow();
    }
  }

  /** One file: stdin, classified whole by one task, or in chunks. */
  private final class Job {
    final String name;
    final boolean stdin;
    long size = -1;
    int chunks;
    FileChannel channel;
    BigramFilter bigrams;
    boolean planned;
    boolean dropped;
    int submitted;

    /** Submitted and not yet taken, in order. */
    final ArrayDeque<Future<?>> pending = new ArrayDeque<>();

    Job(String name) {
      this.name = name;
      this.stdin = name.equals("-");
    }

    /** Decides how to read the file: in chunks only when it is a large regular file. */
    void plan() {
      planned = true;
      if (stdin || pool == null) {
        return;
      }
      Path path = Path.of(name);
      try {
        if (Files.isRegularFile(path)) {
          size = Files.size(path);
          // chunks are read at offsets: a compressed file has none, a binary one is refused whole
          if (size > chunkBytes && !LogInput.needsStream(path)) {
            channel = FileChannel.open(path, StandardOpenOption.READ);
            chunks = (int) ((size + chunkBytes - 1) / chunkBytes);
            bigrams = bigrams(channel, size);
          }
        }
      } catch (IOException | RuntimeException e) {
        chunks = 0; // the whole-file task reports the error in its turn
      }
    }

    /** The first pass of this file's chunks, its pairs ranked on the file's first bytes. */
    private BigramFilter bigrams(FileChannel ch, long size) throws IOException {
      byte[] sample = new byte[(int) Math.min(size, SAMPLE_BYTES)];
      ChunkScanner.readFully(ch, ByteBuffer.wrap(sample), 0);
      return prefilter().bigrams(sample, 0, sample.length);
    }

    /** Units of work this job still has to submit to the pool. */
    boolean hasUnits() {
      return !stdin && !dropped && submitted < Math.max(1, chunks);
    }

    void submitNext() {
      if (chunks == 0) {
        pending.add(pool.submit(() -> classifyWhole(name)));
      } else {
        long start = (long) submitted * chunkBytes;
        long end = Math.min(size, start + chunkBytes);
        FileChannel ch = channel;
        long sz = size;
        BigramFilter bf = bigrams;
        pending.add(
            // scanned at once, prepared once the catalog is there: a large file is read while the
            // catalog still loads
            CompletableFuture.supplyAsync(() -> scan(ch, sz, start, end, bf), pool)
                .thenCombineAsync(catalogSource, ParallelClassifier.this::prepared, pool));
      }
      submitted++;
    }

    void close() {
      if (channel != null) {
        try {
          channel.close();
        } catch (IOException ignored) {
          // read-only: nothing is lost
        }
      }
    }
  }

  private List<Incident> classifyWhole(String name) throws IOException {
    return classify(LogInput.open(Path.of(name)), name, offlines.get(), null);
  }

  /**
   * Keeps at most {@code limit} units submitted and not yet taken, in the files' order, so memory
   * stays bounded however many files or chunks there are.
   */
  private final class Window {
    private final List<Job> jobs;
    private final int limit;
    private int next; // the job whose units are submitted next
    private int inFlight;

    Window(List<Job> jobs, int limit) {
      this.jobs = jobs;
      this.limit = limit;
    }

    void topUp() {
      if (pool == null) {
        return;
      }
      while (inFlight < limit && next < jobs.size()) {
        Job j = jobs.get(next);
        if (!j.planned) {
          j.plan();
        }
        if (!j.hasUnits()) {
          next++;
          continue;
        }
        j.submitNext();
        inFlight++;
      }
    }

    /** The job's next unit's result, waiting for it. */
    @SuppressWarnings("unchecked")
    <T> T take(Job job) throws IOException {
      topUp();
      Future<?> f = job.pending.poll();
      if (f == null) {
        throw new IllegalStateException("no work submitted for " + job.name);
      }
      try {
        return (T) f.get();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted", e);
      } catch (ExecutionException e) {
        Throwable c = e.getCause();
        if (c instanceof IOException io) {
          throw io;
        }
        if (c instanceof UncheckedIOException u) {
          throw u.getCause();
        }
        if (c instanceof RuntimeException re) {
          throw re;
        }
        throw new IOException(c);
      } finally {
        inFlight--;
        topUp();
      }
    }

    /** Forgets what a finished (or failed) job left untaken, so the window moves on. */
    void drop(Job job) {
      job.dropped = true;
      for (Future<?> f = job.pending.poll(); f != null; f = job.pending.poll()) {
        f.cancel(false); // never interrupt: that would close the shared channel under a reader
        inFlight--;
      }
    }
  }
}
