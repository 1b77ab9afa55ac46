package dev.cudawatch.ingest.attribution;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Joins a kernel line that names a process (an Xid's {@code pid=1317}, the OOM killer's {@code
 * Killed process 1317}) to that process's job, rank, local rank and GPU, read from its environment
 * ({@code /proc/<pid>/environ}) as {@link RunAttribution#of} reads a wrapped job's: the launchers'
 * variables and {@code CUDAWATCH_JOB}, which {@code cudawatch run} hands to its descendants.
 *
 * <p>Reading another process's environment takes that process's memory lock, which a process stuck
 * in the GPU driver (the very one an Xid names) may hold for good: the read runs on a lookup
 * thread, one at a time, and the kernel reader waits for it at most {@code wait}; while one is
 * stuck the next lines do not wait at all. Answers are kept per pid for {@link #CACHE_FOR} (an Xid
 * storm names the same pid hundreds of times), at most {@link #MAX_CACHED} pids.
 */
public final class KernelPidJoin implements AutoCloseable {
  /** The most of a process's environment read; a longer one is cut (its last variable dropped). */
  public static final int MAX_ENVIRON_BYTES = 1 << 20;

  /** A variable's value longer than this is not a job, rank or device list: dropped. */
  static final int MAX_VALUE_CHARS = 4096;

  static final int MAX_CACHED = 256;

  /** Short: a pid is reused once its process is gone, and then names another job. */
  static final Duration CACHE_FOR = Duration.ofSeconds(5);

  /** What the kernel reader waits for a read: far above a healthy read, once per stuck one. */
  public static final Duration WAIT = Duration.ofMillis(500);

  private static final Pattern PID_FIELD = Pattern.compile("\\bpid=(\\d{1,10})\\b");
  private static final Pattern KILLED = Pattern.compile("Killed process (\\d{1,10})\\b");

  /** The only variables kept: what decides job, rank and GPU (bounds what the cache holds). */
  private static final Set<String> WANTED = wanted();

  /** How a kernel line that names a pid ended: the metric's label. */
  public enum Result {
    /** Job (and what else the environment told) set on the record. */
    JOINED,
    /** The process had ended (or was exiting: no environment left). */
    GONE,
    /** Its environment could not be read (permissions, another error). */
    UNREADABLE,
    /** Its environment names no job. */
    NO_JOB,
    /** The read did not answer in time (a process stuck in the driver): shipped without it. */
    SLOW;

    public String label() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  /** A read of one pid's environment: the wanted variables, or why there are none. */
  private record Read(Map<String, String> env, Result failure, long atNanos) {}

  private final Path proc;
  private final Supplier<GpuInventory> inventory;
  private final Lookups reads;
  private final Duration wait;
  private final LongSupplier nanos;
  private final Map<Long, Read> cache =
      new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, Read> e) {
          return size() > MAX_CACHED;
        }
      };
  private final Map<Result, AtomicLong> counts = new EnumMap<>(Result.class);

  /**
   * @param proc the proc file system (the agent's {@code proc_dir}, or a fixture)
   * @param inventory the node's GPUs as known now (never asked of nvidia-smi here)
   * @param reads where environments are read ({@link Lookups#inline} in tests)
   * @param wait how long the caller waits for one read
   * @param nanos the monotonic clock the cache ages by
   */
  public KernelPidJoin(
      Path proc,
      Supplier<GpuInventory> inventory,
      Lookups reads,
      Duration wait,
      LongSupplier nanos) {
    this.proc = proc;
    this.inventory = inventory;
    this.reads = reads;
    this.wait = wait;
    this.nanos = nanos;
    for (Result r : Result.values()) {
      counts.put(r, new AtomicLong());
    }
  }

  /** The node's: reads on one daemon thread, the kernel reader waits at most {@link #WAIT}. */
  public static KernelPidJoin forNode(Path proc, Supplier<GpuInventory> inventory) {
    return new KernelPidJoin(
        proc, inventory, Lookups.pool("kmsg-pid", 1, 1, new Changes()), WAIT, System::nanoTime);
  }

  /** The process a kernel line names ({@code pid=N}, {@code Killed process N}), or -1. */
  public static long pidOf(String message) {
    Matcher m = PID_FIELD.matcher(message);
    if (!m.find()) {
      m = KILLED.matcher(message);
      if (!m.find()) {
        return -1; // pid=<unknown>, pid='<unknown>', or no pid at all
      }
    }
    long pid = Long.parseLong(m.group(1));
    return pid > 0 ? pid : -1; // pid=0: the kernel itself
  }

  /**
   * The job, rank, local rank and GPU of the process {@code message} names, with where each came
   * from; null (and counted) when it names none, the process is gone or its environment names no
   * job. {@code lineGpu} (the GPU the line's PCI address names) wins over the environment's.
   */
  public RunAttribution join(String message, Integer lineGpu) {
    long pid = pidOf(message);
    if (pid <= 0) {
      return null;
    }
    Read read = read(pid);
    if (read.failure() != null) {
      counts.get(read.failure()).incrementAndGet();
      return null;
    }
    GpuInventory inv = inventory.get();
    RunAttribution env = RunAttribution.of(read.env(), null, null, inv);
    if (env.job() == null) {
      counts.get(Result.NO_JOB).incrementAndGet();
      return null;
    }
    counts.get(Result.JOINED).incrementAndGet();
    String from = "pid " + pid + "'s environment";
    Map<String, String> a = new LinkedHashMap<>();
    for (String k : new String[] {"job", "rank", "local_rank"}) {
      String how = env.attribution().get(k);
      if (how != null) {
        a.put(k, from + " (" + how + ")");
      }
    }
    Integer gpu = env.gpu();
    String uuid = env.gpuUuid();
    String gpuHow = env.attribution().get("gpu");
    String uuidHow = env.attribution().get("gpu_uuid");
    if (lineGpu != null) {
      if (!lineGpu.equals(gpu)) {
        // the line's device is the one that failed, even where the process uses several
        GpuInventory.Gpu g = inv.byIndex(lineGpu);
        uuid = g == null ? null : g.uuid();
        uuidHow = uuid == null ? null : "the line's PCI address + nvidia-smi";
      } else if (uuidHow != null) {
        uuidHow = from + " (" + uuidHow + ")";
      }
      gpu = lineGpu;
      gpuHow = "the line's PCI address + nvidia-smi";
    } else {
      gpuHow = gpuHow == null ? null : from + " (" + gpuHow + ")";
      uuidHow = uuidHow == null ? null : from + " (" + uuidHow + ")";
    }
    if (gpu != null) {
      a.put("gpu", gpuHow);
    }
    if (uuid != null) {
      a.put("gpu_uuid", uuidHow);
    }
    if (env.attribution().get("visible_gpus") != null) {
      a.put("visible_gpus", env.attribution().get("visible_gpus"));
    }
    a.put("pid", Long.toString(pid));
    return new RunAttribution(env.job(), env.rank(), env.localRank(), gpu, uuid, a);
  }

  /** Lines that named a pid, by how their join ended. */
  public Map<String, Long> counts() {
    Map<String, Long> out = new LinkedHashMap<>();
    counts.forEach((r, n) -> out.put(r.label(), n.get()));
    return out;
  }

  private Read read(long pid) {
    synchronized (cache) {
      Read c = cache.get(pid);
      if (c != null && nanos.getAsLong() - c.atNanos() < CACHE_FOR.toNanos()) {
        return c;
      }
    }
    CompletableFuture<Read> answer = new CompletableFuture<>();
    // one key: one read at a time, so a read stuck on a process's lock holds no queue of others
    if (!reads.submit("environ", () -> answer.complete(remember(pid, readNow(pid))))) {
      return new Read(null, Result.SLOW, 0);
    }
    try {
      return answer.get(wait.toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      return new Read(null, Result.SLOW, 0); // it may still answer: the cache then has it
    } catch (ExecutionException e) {
      return new Read(null, Result.UNREADABLE, 0);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // the reader is stopping
      return new Read(null, Result.SLOW, 0);
    }
  }

  private Read remember(long pid, Read r) {
    synchronized (cache) {
      cache.put(pid, r);
    }
    return r;
  }

  private Read readNow(long pid) {
    Path dir = proc.resolve(Long.toString(pid));
    long at = nanos.getAsLong();
    try {
      Map<String, String> env = environ(dir.resolve("environ"));
      // an exiting process (the OOM killer's victim, a zombie) has no memory left to read
      return env == null ? new Read(null, Result.GONE, at) : new Read(env, null, at);
    } catch (NoSuchFileException e) {
      return new Read(null, Result.GONE, at);
    } catch (AccessDeniedException e) {
      return new Read(null, Result.UNREADABLE, at);
    } catch (IOException | RuntimeException e) {
      // ESRCH while the process exits reads as an I/O error: gone if its directory went too
      return new Read(null, Files.isDirectory(dir) ? Result.UNREADABLE : Result.GONE, at);
    }
  }

  /**
   * The wanted variables of {@code /proc/<pid>/environ} (NUL-separated {@code KEY=VALUE}), read up
   * to {@link #MAX_ENVIRON_BYTES}; null when it is empty.
   */
  static Map<String, String> environ(Path file) throws IOException {
    byte[] b;
    try (InputStream in = Files.newInputStream(file)) {
      b = in.readNBytes(MAX_ENVIRON_BYTES + 1);
    }
    if (b.length == 0) {
      return null;
    }
    boolean cut = b.length > MAX_ENVIRON_BYTES;
    String[] kvs =
        new String(b, 0, Math.min(b.length, MAX_ENVIRON_BYTES), StandardCharsets.UTF_8).split("\0");
    Map<String, String> env = new HashMap<>();
    for (int i = 0; i < kvs.length - (cut ? 1 : 0); i++) { // a cut environment's last is partial
      int eq = kvs[i].indexOf('=');
      if (eq > 0 && kvs[i].length() - eq - 1 <= MAX_VALUE_CHARS) {
        String k = kvs[i].substring(0, eq);
        if (WANTED.contains(k)) {
          env.put(k, kvs[i].substring(eq + 1));
        }
      }
    }
    return env;
  }

  private static Set<String> wanted() {
    Set<String> s = new HashSet<>();
    s.addAll(RankSources.JOB);
    s.addAll(RankSources.RANK);
    s.addAll(RankSources.LOCAL_RANK);
    s.addAll(VisibleDevices.VARIABLES);
    return Set.copyOf(s);
  }

  @Override
  public void close() {
    reads.close();
  }
}
