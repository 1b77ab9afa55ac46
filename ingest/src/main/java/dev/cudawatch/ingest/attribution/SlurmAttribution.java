package dev.cudawatch.ingest.attribution;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Clock;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Job and GPUs of a followed file from Slurm: the job by the file's path ({@code slurm-%j.out} and
 * other configured patterns) or by a prolog sidecar's output paths ({@link SlurmSidecar}), then the
 * GPUs the job holds on this node from its sidecar or, without one, from {@code scontrol show job
 * -d} ({@link ScontrolJob}); indexes map to UUIDs through nvidia-smi's inventory.
 *
 * <p>Bounded: the sidecar directory is re-listed at most every {@code refreshMs} and only its
 * {@code maxJobs} newest files are read (files over 64 KiB are skipped and counted); scontrol
 * answers (found or not) are cached for {@code ttlMs} in an LRU of {@code maxJobs} jobs, and one
 * call takes at most 5 s.
 */
public final class SlurmAttribution implements FileSource {
  static final String TRIED = "slurm (path patterns, prolog sidecar, scontrol show job -d)";
  private static final long MAX_SIDECAR_BYTES = 64 * 1024;

  private final Path sidecarDir;
  private final List<SlurmPathPattern> patterns;
  private final Function<String, String> scontrol;
  private final String node;
  private final GpuInventory inventory;
  private final Clock clock;
  private final long refreshMs;
  private final long ttlMs;
  private final int maxJobs;
  private final AtomicLong badSidecars = new AtomicLong();

  /** Sidecars by job id (and array id), and by the output paths they name. */
  private Map<String, SlurmSidecar> byJob = Map.of();

  private Map<String, SlurmSidecar> byPath = Map.of();
  private final Map<String, Parsed> parsed = new HashMap<>();
  private long listedAt;
  private boolean listed;

  private record Parsed(long mtime, long size, SlurmSidecar sidecar) {}

  private record Asked(long at, ScontrolJob job) {}

  private final LinkedHashMap<String, Asked> asked;

  /**
   * @param sidecarDir where the prolog writes sidecars ({@code /run/cudawatch/slurm})
   * @param patterns log path patterns naming the job
   * @param scontrol {@code scontrol show job -d ID}'s output for a job id, or null (not found, no
   *     scontrol); null function for none
   * @param node this node's Slurm name (GPU lines of other nodes are not this node's)
   */
  public SlurmAttribution(
      Path sidecarDir,
      List<SlurmPathPattern> patterns,
      Function<String, String> scontrol,
      String node,
      GpuInventory inventory,
      Clock clock,
      long refreshMs,
      long ttlMs,
      int maxJobs) {
    this.sidecarDir = sidecarDir;
    this.patterns = List.copyOf(patterns);
    this.scontrol = scontrol;
    this.node = node;
    this.inventory = inventory;
    this.clock = clock;
    this.refreshMs = refreshMs;
    this.ttlMs = ttlMs;
    this.maxJobs = maxJobs;
    this.asked =
        new LinkedHashMap<>(16, 0.75f, true) {
          @Override
          protected boolean removeEldestEntry(Map.Entry<String, Asked> e) {
            return size() > SlurmAttribution.this.maxJobs;
          }
        };
  }

  /** Sidecar files that could not be used (not JSON, no job id, too large). */
  public long badSidecars() {
    return badSidecars.get();
  }

  @Override
  public synchronized FileAttribution.Of of(String file) {
    Map<String, String> a = new LinkedHashMap<>();
    a.put("tried", TRIED);
    refreshSidecars();
    String job = null;
    String how = null;
    for (SlurmPathPattern p : patterns) {
      job = p.jobOf(file);
      if (job != null) {
        how = "slurm path pattern " + p;
        break;
      }
    }
    SlurmSidecar side = job != null ? byJob.get(job) : byPath.get(file);
    if (job == null && side != null) {
      job = side.jobId();
      how = "slurm sidecar (" + (file.equals(side.stdOut()) ? "std_out" : "std_err") + ")";
    }
    if (job == null) {
      return new FileAttribution.Of(null, null, null, null, null, a);
    }
    a.put("job", how);
    List<Integer> gpus = List.of();
    String gpusFrom = null;
    if (side != null) {
      gpus = side.gpus();
      gpusFrom = "slurm sidecar" + (side.gpusFrom() != null ? " (" + side.gpusFrom() + ")" : "");
      if (side.node() != null) {
        a.put("slurm_node", side.node());
      }
    } else {
      ScontrolJob sj = ask(job);
      if (sj != null) {
        gpus = sj.gpusOn(node);
        gpusFrom = "scontrol show job -d (GRES IDX on " + node + ")";
        a.put("slurm_node", node);
      }
    }
    Integer gpu = null;
    String uuid = null;
    if (!gpus.isEmpty()) {
      a.put("visible_gpus", gpus.stream().map(String::valueOf).collect(Collectors.joining(",")));
      if (gpus.size() == 1) {
        gpu = gpus.get(0);
        a.put("gpu", gpusFrom);
        GpuInventory.Gpu g = inventory.byIndex(gpu);
        if (g != null) {
          uuid = g.uuid();
          a.put("gpu_uuid", gpusFrom + " + nvidia-smi");
        }
      }
    }
    // the field attribution of the job comes first in what readers see
    Map<String, String> ordered = new LinkedHashMap<>();
    ordered.put("job", a.remove("job"));
    ordered.putAll(a);
    return new FileAttribution.Of(job, null, null, gpu, uuid, ordered);
  }

  /** scontrol's view of {@code job}, cached (found or not) for ttlMs. */
  private ScontrolJob ask(String job) {
    if (scontrol == null) {
      return null;
    }
    long now = clock.millis();
    Asked c = asked.get(job);
    if (c != null && now - c.at() < ttlMs && now >= c.at()) {
      return c.job();
    }
    String text = scontrol.apply(job);
    ScontrolJob sj = text == null ? null : ScontrolJob.parse(text);
    asked.put(job, new Asked(now, sj));
    return sj;
  }

  private void refreshSidecars() {
    long now = clock.millis();
    if (listed && now - listedAt < refreshMs && now >= listedAt) {
      return;
    }
    listed = true;
    listedAt = now;
    if (sidecarDir == null || !Files.isDirectory(sidecarDir)) {
      byJob = Map.of();
      byPath = Map.of();
      parsed.clear();
      return;
    }
    Map<Path, BasicFileAttributes> files = new HashMap<>();
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(sidecarDir, "*.json")) {
      for (Path f : ds) {
        try {
          BasicFileAttributes at =
              Files.readAttributes(f, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
          if (at.isRegularFile()) {
            files.put(f, at);
          }
        } catch (IOException e) {
          // gone between listing and reading: the job's epilog cleaned it
        }
      }
    } catch (IOException e) {
      return; // keep what was known
    }
    List<Path> newest =
        files.keySet().stream()
            .sorted(
                (x, y) ->
                    files.get(y).lastModifiedTime().compareTo(files.get(x).lastModifiedTime()))
            .limit(maxJobs)
            .toList();
    Map<String, SlurmSidecar> jobs = new HashMap<>();
    Map<String, SlurmSidecar> paths = new HashMap<>();
    Map<String, Parsed> keep = new HashMap<>();
    for (Path f : newest) {
      BasicFileAttributes at = files.get(f);
      String key = f.getFileName().toString();
      Parsed p = parsed.get(key);
      long mtime = at.lastModifiedTime().toMillis();
      if (p == null || p.mtime() != mtime || p.size() != at.size()) {
        p = new Parsed(mtime, at.size(), read(f, at.size()));
      }
      keep.put(key, p);
      SlurmSidecar s = p.sidecar();
      if (s == null) {
        continue;
      }
      jobs.put(s.jobId(), s);
      if (s.arrayJob() != null) {
        jobs.put(s.arrayJob(), s);
      }
      if (s.stdOut() != null) {
        paths.put(s.stdOut(), s);
      }
      if (s.stdErr() != null) {
        paths.put(s.stdErr(), s);
      }
    }
    parsed.clear();
    parsed.putAll(keep);
    byJob = jobs;
    byPath = paths;
  }

  private SlurmSidecar read(Path f, long size) {
    if (size > MAX_SIDECAR_BYTES) {
      badSidecars.incrementAndGet();
      return null;
    }
    try {
      return SlurmSidecar.parse(Files.readString(f, StandardCharsets.UTF_8));
    } catch (IOException | RuntimeException e) {
      badSidecars.incrementAndGet();
      return null;
    }
  }

  /**
   * Runs {@code scontrol show job -d ID} ({@code binary} as configured); null when it is absent,
   * fails, or takes over 5 s.
   */
  public static Function<String, String> scontrol(String binary) {
    return job -> {
      if (!job.matches("[0-9]{1,12}(_[0-9]{1,9})?")) {
        return null;
      }
      try {
        Process p =
            new ProcessBuilder(binary, "show", "job", "-d", job).redirectErrorStream(true).start();
        p.getOutputStream().close();
        if (!p.waitFor(5, TimeUnit.SECONDS)) {
          p.destroyForcibly();
          return null;
        }
        String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        return p.exitValue() == 0 ? text : null;
      } catch (IOException e) {
        return null;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return null;
      }
    };
  }
}
