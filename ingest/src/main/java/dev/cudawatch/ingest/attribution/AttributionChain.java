package dev.cudawatch.ingest.attribution;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * The agent's sources for a followed file in order of trust (the scheduler's records, Slurm and
 * Kubernetes, before the process scan of /proc): each field comes from the first source that knows
 * it, and {@code attribution} says which; {@code tried} lists every source asked. The line's own
 * text still wins over all of them, downstream. The sources never block (their lookups run on
 * {@link Lookups}' threads); the chain keeps each file's answer, so a line costs a map look-up.
 */
public final class AttributionChain implements FileSource {
  private static final List<String> FIELDS =
      List.of("job", "rank", "local_rank", "gpu", "gpu_uuid");

  /** A file's answer is asked of the sources again at least this often (they refresh on a TTL). */
  private static final long RECHECK_NANOS = 1_000_000_000L;

  /** At most this much waiting for answers in any second, whatever the number of new files. */
  private static final long MAX_WAIT_NANOS_PER_SECOND = 100_000_000L;

  private final List<FileSource> sources;
  private final Changes changes;
  private final LongSupplier nanos;
  private final long waitNanos;
  private final LinkedHashMap<String, Entry> files;
  private final AtomicLong linesBeforeKnown = new AtomicLong();
  private final AtomicLong waits = new AtomicLong();
  private long windowStart;
  private long waitedInWindow;

  /**
   * A file's answer: what the sources said at {@code generation} of {@link Changes}; {@code
   * settled} once no source still waited for a lookup (later answers still enrich it).
   */
  private record Entry(FileAttribution.Of of, long generation, long at, boolean settled) {}

  /** The chain with no waiting and no cache bound beyond {@code 65536} files: for tests. */
  public AttributionChain(List<FileSource> sources) {
    this(sources, new Changes(), System::nanoTime, 0, 65_536);
  }

  /**
   * @param changes moved by every lookup of the sources: a file's cached answer is asked again
   *     after a move
   * @param nanos the monotonic clock of the per-file cache and the per-second wait cap
   * @param waitMs how long a file's first line may wait for the lookups it started
   * @param maxFiles files whose answer is kept (the least recently read go first)
   */
  public AttributionChain(
      List<FileSource> sources, Changes changes, LongSupplier nanos, long waitMs, int maxFiles) {
    this.sources = List.copyOf(sources);
    this.changes = changes;
    this.nanos = nanos;
    this.waitNanos = waitMs * 1_000_000L;
    this.files =
        new LinkedHashMap<>(16, 0.75f, true) {
          @Override
          protected boolean removeEldestEntry(Map.Entry<String, Entry> e) {
            return size() > maxFiles;
          }
        };
  }

  public List<FileSource> sources() {
    return sources;
  }

  /** Lines that shipped while a lookup their file needed had not answered yet. */
  public long linesBeforeKnown() {
    return linesBeforeKnown.get();
  }

  /** New files whose first line waited (briefly) for a lookup. */
  public long waits() {
    return waits.get();
  }

  /**
   * Per file, not per line: a file's answer is kept and asked of the sources again only when a
   * lookup has finished since, or a second has passed. A file's first line waits at most {@code
   * waitMs} for the lookups it started (sidecars, scontrol, /proc, the kubelet), and all files
   * together at most 100 ms in any second; past that the line ships with what is known, and later
   * lines carry the answer once it comes.
   */
  @Override
  public synchronized FileAttribution.Of of(String file) {
    long now = nanos.getAsLong();
    long generation = changes.generation();
    Entry e = files.get(file);
    if (e != null && e.generation() == generation && now - e.at() < RECHECK_NANOS) {
      if (!e.settled()) {
        linesBeforeKnown.incrementAndGet();
      }
      return e.of();
    }
    FileAttribution.Of of = ask(file);
    boolean pending = pending(file);
    if (e == null && pending) {
      long budget = budget(now);
      if (budget > 0) {
        waits.incrementAndGet();
        long start = System.nanoTime(); // a real wait: the monotonic clock, not the injected one
        long deadline = start + budget;
        while (pending) {
          long left = deadline - System.nanoTime();
          if (left <= 0) {
            break;
          }
          try {
            changes.await(generation, left);
          } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
            break;
          }
          generation = changes.generation();
          of = ask(file);
          pending = pending(file);
        }
        waitedInWindow += System.nanoTime() - start;
      }
    }
    if (e != null && of.equals(e.of())) {
      // the same instance while nothing changed: a line's JSON keeps its file's attribution bytes
      // only while the map is the same instance (LogRecordJson), and a re-ask each second made a
      // new one
      of = e.of();
    }
    boolean settled = (e != null && e.settled()) || !pending;
    if (!settled) {
      linesBeforeKnown.incrementAndGet();
    }
    files.put(file, new Entry(of, generation, nanos.getAsLong(), settled));
    return of;
  }

  /** What this file's first line may still wait, within the per-second cap. */
  private long budget(long now) {
    if (waitNanos <= 0) {
      return 0;
    }
    if (now - windowStart >= 1_000_000_000L || now < windowStart) {
      windowStart = now;
      waitedInWindow = 0;
    }
    return Math.min(waitNanos, MAX_WAIT_NANOS_PER_SECOND - waitedInWindow);
  }

  /**
   * Starts every source's first lookups and waits for them at most {@code timeout}: the files
   * already there when the agent starts are then read with what those lookups tell.
   */
  public void prime(java.time.Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      long generation = changes.generation();
      boolean all = true;
      for (FileSource s : sources) {
        all &= s.primed();
      }
      long left = deadline - System.nanoTime();
      if (all || left <= 0) {
        return;
      }
      try {
        changes.await(generation, left);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  private FileAttribution.Of ask(String file) {
    List<FileAttribution.Of> found = new ArrayList<>(sources.size());
    for (FileSource s : sources) {
      found.add(s.of(file));
    }
    return merge(found);
  }

  @Override
  public boolean pending(String file) {
    for (FileSource s : sources) {
      if (s.pending(file)) {
        return true;
      }
    }
    return false;
  }

  /** Field by field, the first answer that knows it; GPU index and UUID from the same source. */
  static FileAttribution.Of merge(List<FileAttribution.Of> found) {
    Map<String, String> attr = new LinkedHashMap<>();
    List<String> tried = new ArrayList<>();
    String job = null;
    Integer rank = null;
    Integer localRank = null;
    Integer gpu = null;
    String uuid = null;
    for (FileAttribution.Of o : found) {
      Map<String, String> a = o.attribution() == null ? Map.of() : o.attribution();
      if (job == null && o.job() != null) {
        job = o.job();
        attr.put("job", a.getOrDefault("job", "agent"));
      }
      if (rank == null && o.rank() != null) {
        rank = o.rank();
        attr.put("rank", a.getOrDefault("rank", "agent"));
      }
      if (localRank == null && o.localRank() != null) {
        localRank = o.localRank();
        attr.put("local_rank", a.getOrDefault("local_rank", "agent"));
      }
      if (gpu == null && uuid == null && (o.gpu() != null || o.gpuUuid() != null)) {
        gpu = o.gpu();
        uuid = o.gpuUuid();
        if (gpu != null) {
          attr.put("gpu", a.getOrDefault("gpu", "agent"));
        }
        if (uuid != null) {
          attr.put("gpu_uuid", a.getOrDefault("gpu_uuid", "agent"));
        }
      }
      for (Map.Entry<String, String> e : a.entrySet()) {
        if (e.getKey().equals("tried")) {
          if (!e.getValue().isBlank()) {
            tried.add(e.getValue());
          }
        } else if (!FIELDS.contains(e.getKey())) {
          attr.putIfAbsent(e.getKey(), e.getValue());
        }
      }
    }
    attr.put("tried", String.join(", ", tried));
    // immutable once, per file: each line's record then keeps this map instead of copying it
    return new FileAttribution.Of(job, rank, localRank, gpu, uuid, Map.copyOf(attr));
  }
}
