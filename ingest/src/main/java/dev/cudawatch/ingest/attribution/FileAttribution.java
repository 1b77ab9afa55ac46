package dev.cudawatch.ingest.attribution;

import java.time.Clock;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Job, rank and GPU of a followed log file, from the process that has it open ({@link
 * ProcessScan}): its open {@code /dev/nvidiaN} when it holds exactly one GPU, else its environment.
 * One pass over /proc serves every file and is refreshed at most every {@code refreshMs}, so the
 * cost does not grow with the number of files.
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

  private final ProcessScan scan;
  private final Clock clock;
  private final long refreshMs;
  static final long NEW_FILE_MS = 5_000;

  private Map<String, ProcessScan.Found> open = new HashMap<>();
  private long scannedAt;
  private boolean scanned;

  public FileAttribution(ProcessScan scan, Clock clock, long refreshMs) {
    this.scan = scan;
    this.clock = clock;
    this.refreshMs = refreshMs;
  }

  /** What is known of {@code file}; only {@code tried} when no process has it open. */
  @Override
  public synchronized Of of(String file) {
    long now = clock.millis();
    long age = now - scannedAt;
    // a new file may have been opened since the last pass: look again, but at most every 5 s
    if (!scanned
        || age >= refreshMs
        || now < scannedAt
        || (!open.containsKey(file) && age >= NEW_FILE_MS)) {
      scanned = true;
      open = scan.openFiles(p -> p.startsWith("/") && !p.startsWith("/dev/"));
      scannedAt = now;
    }
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
}
