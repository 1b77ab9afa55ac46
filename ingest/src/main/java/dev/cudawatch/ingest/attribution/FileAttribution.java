package dev.cudawatch.ingest.attribution;

import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Job, rank and GPU of a followed log file, from the process that has it open ({@link
 * ProcessScan}): its open {@code /dev/nvidiaN} when it holds exactly one GPU, else its environment.
 * One pass over /proc serves every file and is refreshed at most every {@code refreshMs}, so the
 * cost does not grow with the number of files. The pass runs on {@link Lookups}' thread: a line
 * ships with the last pass's answer and never waits for /proc here.
 */
public final class FileAttribution implements FileSource {
  /** What a followed file's records carry: the wire record's fields and attribution. */
  public record Of(
      String job,
      Integer rank,
      Integer localRank,
      Integer gpu,
      String gpuUuid,
      Map<String, String> attribution) {}

  static final String TRIED = "writing process (/proc/<pid>/fd, /dev/nvidiaN, environ)";
  static final long NEW_FILE_MS = 5_000;
  private static final String SCAN = "proc-scan";

  private final ProcessScan scan;
  private final Clock clock;
  private final long refreshMs;
  private final Lookups lookups;

  /** The last pass's answer: what each open file's writer tells, and when the pass began. */
  private record Scanned(Map<String, ProcessScan.Found> open, long at) {}

  private volatile Scanned last;
  private final AtomicLong scans = new AtomicLong();

  /**
   * @param lookups where the pass over /proc runs: never on the caller's thread unless {@link
   *     Lookups#inline}
   */
  public FileAttribution(ProcessScan scan, Clock clock, long refreshMs, Lookups lookups) {
    this.scan = scan;
    this.clock = clock;
    this.refreshMs = refreshMs;
    this.lookups = lookups;
  }

  /** Passes over /proc made. */
  public long scans() {
    return scans.get();
  }

  /**
   * What is known of {@code file} now; only {@code tried} when no process had it open at the last
   * pass. Asks for a new pass when the last is old, or when the file is new to it.
   */
  @Override
  public Of of(String file) {
    Scanned s = last;
    long now = clock.millis();
    // a new file may have been opened since the last pass: look again, but at most every 5 s
    if (s == null
        || now - s.at() >= refreshMs
        || now < s.at()
        || (!s.open().containsKey(file) && now - s.at() >= NEW_FILE_MS)) {
      lookups.submit(SCAN, this::scan);
      s = last;
    }
    Map<String, ProcessScan.Found> open = s == null ? Map.of() : s.open();
    ProcessScan.Found f = open.get(file);
    Map<String, String> a = new LinkedHashMap<>();
    if (f == null) {
      a.put("tried", TRIED + ": no process had the file open");
      return new Of(null, null, null, null, null, a);
    }
    RunAttribution env = f.fromEnvironment();
    a.putAll(env.attribution());
    a.remove("pid");
    a.put("pid", String.valueOf(f.pid()));
    Integer gpu = env.gpu();
    String uuid = env.gpuUuid();
    if (f.openGpus().size() == 1) {
      gpu = f.openGpus().get(0);
      a.put("gpu", "writing process's open /dev/nvidia" + gpu);
      if (uuid != null && env.gpu() != null && !env.gpu().equals(gpu)) {
        uuid = null; // the environment named another GPU: its UUID is not this one's
        a.remove("gpu_uuid");
      }
    }
    a.put("tried", TRIED + ", " + env.attribution().getOrDefault("tried", ""));
    return new Of(env.job(), env.rank(), env.localRank(), gpu, uuid, a);
  }

  @Override
  public boolean primed() {
    if (last == null) {
      lookups.submit(SCAN, this::scan);
    }
    return last != null;
  }

  /** No pass has answered yet, or one that may find the file runs now. */
  @Override
  public boolean pending(String file) {
    Scanned s = last;
    return s == null || (lookups.pending(SCAN) && !s.open().containsKey(file));
  }

  private void scan() {
    long at = clock.millis();
    Map<String, ProcessScan.Found> open =
        scan.openFiles(p -> p.startsWith("/") && !p.startsWith("/dev/"));
    scans.incrementAndGet();
    last = new Scanned(Map.copyOf(open), at);
  }
}
