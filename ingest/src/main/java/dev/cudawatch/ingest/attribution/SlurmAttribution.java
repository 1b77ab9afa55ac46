package dev.cudawatch.ingest.attribution;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * Job and GPUs of a followed file from Slurm: the job by the file's path ({@code slurm-%j.out} and
 * other configured patterns) or by a prolog sidecar's output paths ({@link SlurmSidecar}), then the
 * GPUs the job holds on this node from its sidecar or, without one, from {@code scontrol show job
 * -d} ({@link ScontrolJob}); indexes map to UUIDs through nvidia-smi's inventory.
 *
 * <p>A sidecar speaks for an output path only when the file there is a regular file owned by the
 * sidecar's job's user ({@code uid}, or {@code user} from older prologs): any user may name
 * anyone's path with {@code sbatch -o}, and such a claim is refused and counted ({@link
 * #refusedSidecars}). Of the sidecars that may speak for a path, the newest (the prolog writes it
 * as its job begins) wins: a reused {@code -o train.log} is the running job's, not one that ended
 * days ago.
 *
 * <p>Never blocks the reader: the sidecar directory is listed and scontrol is asked on {@link
 * Lookups}' threads, and {@link #of} answers from what they last found. Bounded: the directory is
 * re-listed at most every {@code refreshMs} (every 2 s while a file or a named path is new to it)
 * and only its {@code maxJobs} newest files are read (files over 64 KiB are skipped and counted);
 * scontrol answers (found, not found or timed out) are kept for {@code ttlMs} in an LRU of {@code
 * maxJobs} jobs, one call per job at a time.
 */
public final class SlurmAttribution implements FileSource {
  static final String TRIED = "slurm (path patterns, prolog sidecar, scontrol show job -d)";
  private static final long MAX_SIDECAR_BYTES = 64 * 1024;

  /** How soon the directory is listed again for a file, or a named path, it did not know. */
  static final long NEW_FILE_MS = 2_000;

  private static final String LIST = "slurm-sidecars";

  private final Path sidecarDir;
  private final List<SlurmPathPattern> patterns;
  private final Function<String, String> scontrol;
  private final String node;
  private final Supplier<GpuInventory> inventory;
  private final Clock clock;
  private final long refreshMs;
  private final long ttlMs;
  private final int maxJobs;
  private final Lookups sidecarLookups;
  private final Lookups scontrolLookups;
  private final AtomicLong badSidecars = new AtomicLong();
  private final AtomicLong listings = new AtomicLong();
  private final AtomicLong scontrolCalls = new AtomicLong();
  private final AtomicLong refusedSidecars = new AtomicLong();
  private final Set<String> refused = new HashSet<>(); // the listing thread's own

  /**
   * The directory as last listed: sidecars by job id (and array id) and by the output paths they
   * name, and the paths of this node's jobs that exist now, owned by the job's user.
   */
  private record Index(
      Map<String, SlurmSidecar> byJob,
      Map<String, SlurmSidecar> byPath,
      List<String> follow,
      boolean missingPaths,
      long at) {}

  private volatile Index index;
  private final Map<String, Parsed> parsed = new HashMap<>(); // the listing thread's own

  private record Parsed(long mtime, long size, SlurmSidecar sidecar) {}

  /** scontrol's answer for a job (null: not found, failed or timed out), and when it was asked. */
  private record Asked(long at, ScontrolJob job) {}

  private final LinkedHashMap<String, Asked> asked;

  /**
   * @param sidecarDir where the prolog writes sidecars ({@code /run/cudawatch/slurm})
   * @param patterns log path patterns naming the job
   * @param scontrol {@code scontrol show job -d ID}'s output for a job id, or null (not found, no
   *     scontrol); null function for none. Called on {@code scontrolLookups}' threads.
   * @param node this node's Slurm name (GPU lines of other nodes are not this node's)
   * @param sidecarLookups where the directory is listed
   * @param scontrolLookups where scontrol runs (a few threads: a slow slurmctld holds them)
   */
  public SlurmAttribution(
      Path sidecarDir,
      List<SlurmPathPattern> patterns,
      Function<String, String> scontrol,
      String node,
      Supplier<GpuInventory> inventory,
      Clock clock,
      long refreshMs,
      long ttlMs,
      int maxJobs,
      Lookups sidecarLookups,
      Lookups scontrolLookups) {
    this.sidecarDir = sidecarDir;
    this.patterns = List.copyOf(patterns);
    this.scontrol = scontrol;
    this.node = node;
    this.inventory = inventory;
    this.clock = clock;
    this.refreshMs = refreshMs;
    this.ttlMs = ttlMs;
    this.maxJobs = maxJobs;
    this.sidecarLookups = sidecarLookups;
    this.scontrolLookups = scontrolLookups;
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

  /**
   * Sidecars refused for a path they name because the file there is not their job's user's (a job
   * claiming someone else's output with {@code sbatch -o}); each sidecar and path counted once.
   */
  public long refusedSidecars() {
    return refusedSidecars.get();
  }

  /** Listings of the sidecar directory made. */
  public long listings() {
    return listings.get();
  }

  /** scontrol calls made (each at most its deadline). */
  public long scontrolCalls() {
    return scontrolCalls.get();
  }

  /** The job a path pattern names in {@code file}, and which pattern; null when none. */
  private String[] byPattern(String file) {
    for (SlurmPathPattern p : patterns) {
      String job = p.jobOf(file);
      if (job != null) {
        return new String[] {job, "slurm path pattern " + p};
      }
    }
    return null;
  }

  @Override
  public FileAttribution.Of of(String file) {
    Map<String, String> a = new LinkedHashMap<>();
    a.put("tried", TRIED);
    String[] named = byPattern(file);
    String job = named == null ? null : named[0];
    String how = named == null ? null : named[1];
    Index ix = index(file, job);
    SlurmSidecar side =
        ix == null ? null : job != null ? ix.byJob().get(job) : ix.byPath().get(file);
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
        GpuInventory.Gpu g = inventory.get().byIndex(gpu);
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

  /**
   * Whether an answer {@code file} waits for has not come: the directory's first listing, a listing
   * running while the file is new to it, or scontrol's first answer for its job.
   */
  @Override
  public boolean pending(String file) {
    Index ix = index;
    if (ix == null) {
      return true;
    }
    String[] named = byPattern(file);
    String job = named == null ? null : named[0];
    SlurmSidecar side = job != null ? ix.byJob().get(job) : ix.byPath().get(file);
    if (side == null && sidecarLookups.pending(LIST)) {
      return true;
    }
    if (job == null || side != null || scontrol == null) {
      return false;
    }
    synchronized (asked) {
      return !asked.containsKey(job);
    }
  }

  @Override
  public boolean primed() {
    return index(null, null) != null;
  }

  /**
   * The paths the sidecars of this node's jobs name (standard output and error) that exist now as
   * regular files owned by the job's user: what {@code slurm.follow_sidecar_paths} follows. A job
   * of another node, a path that is a link, or a file of someone else (a job's {@code -o
   * /etc/shadow}) is never named here.
   */
  public List<String> followedPaths() {
    Index ix = index(null, null);
    return ix == null ? List.of() : ix.follow();
  }

  /** The index as last listed, asking for a new listing (elsewhere) when one is due. */
  private Index index(String file, String job) {
    Index ix = index;
    long now = clock.millis();
    boolean due = ix == null || now < ix.at() || now - ix.at() >= refreshMs;
    if (!due && now - ix.at() >= NEW_FILE_MS) {
      // a job started since: its sidecar (and its output file) may be there now
      boolean unknown =
          file != null
              && (job != null ? !ix.byJob().containsKey(job) : !ix.byPath().containsKey(file));
      due = unknown || (file == null && ix.missingPaths());
    }
    if (due) {
      sidecarLookups.submit(LIST, this::list);
      ix = index;
    }
    return ix;
  }

  /** scontrol's view of {@code job} as last asked; asks (elsewhere) when not asked within ttlMs. */
  private ScontrolJob ask(String job) {
    if (scontrol == null) {
      return null;
    }
    long now = clock.millis();
    Asked c;
    synchronized (asked) {
      c = asked.get(job);
    }
    if (c == null || now - c.at() >= ttlMs || now < c.at()) {
      scontrolLookups.submit("scontrol " + job, () -> lookUp(job));
      synchronized (asked) {
        c = asked.get(job);
      }
    }
    return c == null ? null : c.job(); // a stale answer serves until the new one comes
  }

  private void lookUp(String job) {
    long at = clock.millis();
    scontrolCalls.incrementAndGet();
    String text = scontrol.apply(job);
    ScontrolJob sj = text == null ? null : ScontrolJob.parse(text);
    synchronized (asked) {
      asked.put(job, new Asked(at, sj)); // not found or timed out: not asked again for ttlMs
    }
  }

  /** Lists the sidecar directory: on the lookup thread, one listing at a time. */
  private void list() {
    long now = clock.millis();
    listings.incrementAndGet();
    synchronized (parsed) {
      index = listed(now);
    }
  }

  private Index listed(long now) {
    Index before = index;
    if (sidecarDir == null || !Files.isDirectory(sidecarDir)) {
      parsed.clear();
      return new Index(Map.of(), Map.of(), List.of(), false, now);
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
      // keep what was known
      return before != null
          ? new Index(before.byJob(), before.byPath(), before.follow(), before.missingPaths(), now)
          : new Index(Map.of(), Map.of(), List.of(), false, now);
    }
    // newest first: when two sidecars name one path (a reused -o train.log), the job that began
    // last is the one writing it now, not one that ended days ago
    List<Path> newest =
        files.keySet().stream()
            .sorted(
                Comparator.comparing((Path f) -> files.get(f).lastModifiedTime())
                    .thenComparing(SlurmAttribution::jobNumber)
                    .reversed())
            .limit(maxJobs)
            .toList();
    Map<String, SlurmSidecar> jobs = new HashMap<>();
    Map<String, List<SlurmSidecar>> named = new LinkedHashMap<>();
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
      jobs.putIfAbsent(s.jobId(), s);
      if (s.arrayJob() != null) {
        jobs.putIfAbsent(s.arrayJob(), s);
      }
      for (String out : new String[] {s.stdOut(), s.stdErr()}) {
        if (out != null) {
          named.computeIfAbsent(out, k -> new ArrayList<>()).add(s);
        }
      }
    }
    Map<String, SlurmSidecar> paths = new HashMap<>();
    Set<String> follow = new LinkedHashSet<>();
    Set<String> refusedNow = new HashSet<>();
    boolean missing = false;
    for (Map.Entry<String, List<SlurmSidecar>> e : named.entrySet()) {
      String out = e.getKey();
      SidecarPaths.Owner owner = SidecarPaths.owner(out);
      if (owner == null) {
        // not written yet: look again soon, for this node's jobs
        missing |= e.getValue().stream().anyMatch(s -> node.equals(s.node()));
        continue;
      }
      // a sidecar speaks for a path only when its job's user owns the file
      SlurmSidecar chosen = null;
      for (SlurmSidecar s : e.getValue()) {
        if (SidecarPaths.owns(s, owner)) {
          chosen = chosen == null ? s : chosen;
        } else {
          refusedNow.add(s.jobId() + "|" + out);
        }
      }
      if (chosen != null) {
        paths.put(out, chosen);
        if (node.equals(chosen.node())) {
          follow.add(out);
        }
      }
    }
    for (String r : refusedNow) {
      if (!refused.contains(r)) {
        refusedSidecars.incrementAndGet(); // once per sidecar and path, not per listing
      }
    }
    refused.clear();
    refused.addAll(refusedNow);
    parsed.clear();
    parsed.putAll(keep);
    return new Index(Map.copyOf(jobs), Map.copyOf(paths), List.copyOf(follow), missing, now);
  }

  /** A sidecar's job id from its file name, to order sidecars written in the same instant. */
  private static long jobNumber(Path f) {
    String n = f.getFileName().toString();
    int end = 0;
    while (end < n.length() && end < 18 && Character.isDigit(n.charAt(end))) {
      end++;
    }
    return end == 0 ? -1 : Long.parseLong(n.substring(0, end));
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
}
