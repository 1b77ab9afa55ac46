package dev.cudawatch.ingest.files;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows the files matching some globs, tracked by identity (device and inode), not by name:
 *
 * <ul>
 *   <li>a renamed file is the same stream under a new name (followed if the glob matches it, else
 *       drained to its end and released, also when the rename happened while the agent was down);
 *   <li>a deleted file is drained through its open handle, then released;
 *   <li>a truncated or rewritten file (copytruncate, a reused inode) starts a new stream from byte
 *       0, and the copy copytruncate made, recognised by the fingerprint of its first bytes,
 *       carries on the old stream from where it was, so nothing is read twice under two ids;
 *   <li>a file that has not grown for {@code closeInactiveMs}, with all its lines acknowledged, is
 *       closed and kept as a position only (no descriptor, no buffer); it is opened again when a
 *       scan sees it grow or shrink, so thousands of finished job logs cost almost nothing;
 *   <li>only regular files are read: links are not followed, neither when scanning nor when
 *       opening, and pipes or devices are refused (counted once each);
 *   <li>a file leaves the checkpoint only once the broker acknowledged all its lines.
 * </ul>
 */
public final class FileTailer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(FileTailer.class);
  private static final long REWIND_BACKOFF_MS = 1000;

  private final List<GlobScanner> scanners = new ArrayList<>();
  private final List<GlobScanner> criMatchers = new ArrayList<>();
  private final AtomicLong criMalformed = new AtomicLong();
  private final Map<String, TailedFile> tracked = new LinkedHashMap<>(); // identity -> file
  private final List<TailedFile> retiring = new ArrayList<>();
  private final Map<String, FilePosition> checkpoint = new HashMap<>(); // identity -> position
  private final Map<String, FilePosition> dormant = new HashMap<>(); // closed while idle
  private final int maxLineBytes;
  private final long readBudget;
  private final long closeInactiveMs;
  private final long scanIntervalMs;
  private long lastScan;
  private boolean scanSoon;
  private final LongSupplier nowMs;
  private final RefusedPaths refused = new RefusedPaths();
  private final ByteBuffer buf = ByteBuffer.allocate(64 * 1024);
  private final AtomicLong rotations = new AtomicLong();
  private final AtomicLong truncations = new AtomicLong();
  private final AtomicLong openFailures = new AtomicLong();
  private final AtomicLong recovered = new AtomicLong();
  private final AtomicLong closedInactive = new AtomicLong();
  private final AtomicLong rewinds = new AtomicLong();
  private volatile int openCount;
  private volatile int idleCount;
  private boolean first = true;
  private final long quietMarkerMs;
  private java.util.function.Supplier<? extends java.util.Collection<String>> alsoFollow;

  /** A builder: globs, {@link Builder#maxLineBytes} and {@link Builder#readBudget} are needed. */
  public static Builder builder() {
    return new Builder();
  }

  private FileTailer(Builder b) {
    this.scanIntervalMs = b.scanIntervalMs;
    for (String g : b.globs) {
      scanners.add(new GlobScanner(g, refused));
    }
    for (String g : b.criGlobs) {
      criMatchers.add(new GlobScanner(g, refused));
    }
    for (FilePosition p : b.positions.values()) {
      checkpoint.put(p.identity(), p);
    }
    this.maxLineBytes = b.maxLineBytes;
    this.readBudget = b.readBudget;
    this.closeInactiveMs = b.closeInactiveMs;
    this.nowMs = b.nowMs;
    this.quietMarkerMs = b.quietMarkerMs;
  }

  /** What a tailer follows and how; the defaults are those of a kernel log or a warm-up file. */
  public static final class Builder {
    private List<String> globs = List.of();
    private List<String> criGlobs = List.of();
    private Map<String, FilePosition> positions = Map.of();
    private int maxLineBytes;
    private long readBudget;
    private long closeInactiveMs = Long.MAX_VALUE;
    private long scanIntervalMs;
    private long quietMarkerMs;
    private LongSupplier nowMs = () -> System.nanoTime() / 1_000_000;

    private Builder() {}

    /** The globs of the files to follow. */
    public Builder globs(List<String> globs) {
      this.globs = List.copyOf(globs);
      return this;
    }

    /**
     * Those of the globs whose files are container logs in the CRI format, decoded by {@link
     * dev.cudawatch.ingest.framing.CriLineDecoder}.
     */
    public Builder criGlobs(List<String> criGlobs) {
      this.criGlobs = List.copyOf(criGlobs);
      return this;
    }

    /** Where each file was, from the last checkpoint (identity to position). */
    public Builder positions(Map<String, FilePosition> positions) {
      this.positions = positions;
      return this;
    }

    /** Longer lines are cut with a marker and counted. */
    public Builder maxLineBytes(int maxLineBytes) {
      this.maxLineBytes = maxLineBytes;
      return this;
    }

    /** Bytes read per file per round. */
    public Builder readBudget(long readBudget) {
      this.readBudget = readBudget;
      return this;
    }

    /** Close a file that has not grown for this long (default: never). */
    public Builder closeInactiveMs(long closeInactiveMs) {
      this.closeInactiveMs = closeInactiveMs;
      return this;
    }

    /**
     * Look for new, renamed and changed files at most this often (open files are read every round):
     * a scan of thousands of paths is the costly part of a round. 0 (the default): every round.
     */
    public Builder scanIntervalMs(long scanIntervalMs) {
      this.scanIntervalMs = scanIntervalMs;
      return this;
    }

    /**
     * Tell the sink ({@link LineSink#quiet}) when a file has not grown for {@code ms} after its
     * lines, and when a file ends (drained after a rename or deletion); 0 (the default) never.
     */
    public Builder quietMarkerMs(long ms) {
      this.quietMarkerMs = ms;
      return this;
    }

    /** The monotonic clock, in milliseconds (injected so tests need not wait). */
    public Builder nowMs(LongSupplier nowMs) {
      this.nowMs = nowMs;
      return this;
    }

    public FileTailer build() {
      if (maxLineBytes <= 0 || readBudget <= 0) {
        throw new IllegalStateException("maxLineBytes and readBudget must be set");
      }
      return new FileTailer(this);
    }
  }

  /**
   * Follows these paths too, as if a glob matched each (asked at every scan; must not block): the
   * output files that this node's Slurm sidecars name.
   */
  public FileTailer alsoFollow(
      java.util.function.Supplier<? extends java.util.Collection<String>> paths) {
    this.alsoFollow = paths;
    return this;
  }

  /**
   * One round: read what open files gained; when a scan is due, also follow renames, drain what
   * left, wake idle files that changed and pick up new files. Returns bytes read.
   */
  public long poll(LineSink sink) {
    long now = nowMs.getAsLong();
    long total = retireAcknowledged(sink, now);
    if (first || scanSoon || now - lastScan >= scanIntervalMs || now < lastScan) {
      lastScan = now;
      scanSoon = false;
      total += scan(sink, now);
    }
    return total + readOpen(sink, now);
  }

  /** Looks at the globs: renames, deletions, truncations, idle files that changed, new files. */
  private long scan(LineSink sink, long now) {
    long total = 0;
    Map<String, Path> present = new LinkedHashMap<>(); // identity -> path, of matching files now
    Map<String, Long> sizes = new HashMap<>();
    for (GlobScanner s : scanners) {
      for (Path p : s.scan()) {
        try {
          FileIdentity.Seen seen = FileIdentity.stat(p);
          if (seen != null && seen.regular() && present.putIfAbsent(seen.identity(), p) == null) {
            sizes.put(seen.identity(), seen.size());
          }
        } catch (IOException e) {
          openFailures.incrementAndGet();
        }
      }
    }
    if (alsoFollow != null) {
      for (String named : alsoFollow.get()) {
        try {
          FileIdentity.Seen seen = FileIdentity.stat(Path.of(named));
          if (seen != null
              && seen.regular()
              && present.putIfAbsent(seen.identity(), Path.of(named)) == null) {
            sizes.put(seen.identity(), seen.size());
          }
        } catch (IOException | RuntimeException e) {
          openFailures.incrementAndGet();
        }
      }
    }
    if (first) {
      first = false;
      total += resumeCheckpointed(present, sizes, sink, now);
    }
    // files that no longer match (renamed away, deleted): read to the end, then let go
    for (Iterator<Map.Entry<String, TailedFile>> it = tracked.entrySet().iterator();
        it.hasNext(); ) {
      TailedFile f = it.next().getValue();
      Path at = present.get(f.identity);
      if (at == null) {
        total += drain(f, sink, now);
        retiring.add(f);
        it.remove();
        rotations.incrementAndGet();
      } else {
        f.path = at;
      }
    }
    wakeDormant(present, sizes, now);
    // truncated or rewritten files: the copy (if any) carries the old stream on
    List<FilePosition> truncated = new ArrayList<>();
    for (TailedFile f : tracked.values()) {
      try {
        if (f.wasReplaced()) {
          truncations.incrementAndGet();
          truncated.add(f.position());
          f.restart();
        }
      } catch (IOException e) {
        LOG.warn("checking {} failed: {}", f.path, e.toString());
      }
    }
    for (FilePosition old : truncated) {
      claimCopy(old, present, sink, now);
    }
    Map<String, List<FilePosition>> byName = null;
    for (var e : present.entrySet()) {
      if (!tracked.containsKey(e.getKey())
          && !dormant.containsKey(e.getKey())
          && !isRetiring(e.getKey())) {
        if (byName == null) {
          byName = followedByName(); // once per round: thousands of new files stay cheap
        }
        if (!isRotatedCopy(e.getValue(), byName)) {
          open(e.getValue(), e.getKey(), null, now);
        }
      }
    }
    return total;
  }

  /** Reads what the open files gained, and closes those idle for close_inactive. */
  private long readOpen(LineSink sink, long now) {
    long total = 0;
    for (Iterator<TailedFile> it = tracked.values().iterator(); it.hasNext(); ) {
      TailedFile f = it.next();
      try {
        if (f.size() < f.readPosition()) {
          scanSoon = true; // truncated: the scan starts it anew and finds its copy; read nothing
          continue;
        }
        if (f.rewindIfFailed(now, REWIND_BACKOFF_MS)) {
          rewinds.incrementAndGet();
        }
        total += f.read(buf, readBudget, sink, now);
        if (quietMarkerMs > 0) {
          f.markQuiet(sink, now, quietMarkerMs);
        }
        if (f.idle(now, closeInactiveMs)) {
          dormant.put(f.identity, f.position());
          closeQuietly(f);
          it.remove();
          closedInactive.incrementAndGet();
        }
      } catch (IOException e) {
        LOG.warn("reading {} failed: {}", f.path, e.toString());
      }
    }
    openCount = tracked.size() + retiring.size();
    idleCount = dormant.size();
    return total;
  }

  /** Closed idle files: forget those gone, follow renames, reopen those whose size changed. */
  private void wakeDormant(Map<String, Path> present, Map<String, Long> sizes, long now) {
    List<FilePosition> wake = new ArrayList<>();
    for (Iterator<Map.Entry<String, FilePosition>> it = dormant.entrySet().iterator();
        it.hasNext(); ) {
      Map.Entry<String, FilePosition> e = it.next();
      FilePosition pos = e.getValue();
      Path at = present.get(pos.identity());
      if (at == null) {
        it.remove(); // deleted or renamed away after everything in it was acknowledged
      } else if (sizes.getOrDefault(pos.identity(), pos.position()) != pos.position()) {
        it.remove();
        wake.add(withPath(pos, at)); // grew (or shrank: a truncation, found once it is open)
      } else if (!at.toString().equals(pos.path())) {
        e.setValue(withPath(pos, at));
      }
    }
    for (FilePosition pos : wake) {
      open(Path.of(pos.path()), pos.identity(), pos, now);
    }
  }

  private static FilePosition withPath(FilePosition p, Path at) {
    return new FilePosition(
        at.toString(), p.identity(), p.sourceId(), p.position(), p.headLength(), p.headHash());
  }

  /** After a restart: resume each checkpointed file wherever it is now, or finish it. */
  private long resumeCheckpointed(
      Map<String, Path> present, Map<String, Long> sizes, LineSink sink, long now) {
    long total = 0;
    for (FilePosition cp : new ArrayList<>(checkpoint.values())) {
      Path at = present.get(cp.identity());
      if (at != null && sizes.getOrDefault(cp.identity(), -1L) == cp.position()) {
        dormant.put(cp.identity(), withPath(cp, at)); // read to its end already: no need to open
        continue;
      }
      if (at == null) {
        at =
            findSibling(
                Path.of(cp.path()), cp.identity()); // renamed to a name the glob does not match
      }
      if (at == null) {
        continue; // gone: nothing left to read
      }
      try {
        if (replaced(at, cp)) {
          // truncated while we were away: the copy carries the old stream; this file starts anew
          claimCopy(cp, present, sink, now);
          checkpoint.remove(cp.identity());
          continue;
        }
        TailedFile f = open(at, cp.identity(), cp, now);
        if (f != null && !present.containsKey(cp.identity())) {
          total += drain(f, sink, now);
          tracked.remove(cp.identity());
          retiring.add(f);
        }
      } catch (IOException e) {
        LOG.warn("resuming {}: {}", at, e.toString());
      }
    }
    checkpoint.clear();
    return total;
  }

  /**
   * Finds the file holding the old content of a truncated stream, by fingerprint, and reads it on.
   */
  private void claimCopy(FilePosition old, Map<String, Path> present, LineSink sink, long now) {
    if (old.headLength() <= 0) {
      return;
    }
    List<Path> candidates = new ArrayList<>(present.values());
    Path dir = Path.of(old.path()).toAbsolutePath().getParent();
    if (dir != null) {
      try (var s = Files.list(dir)) {
        s.filter(p -> Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS))
            .filter(p -> !candidates.contains(p))
            .forEach(candidates::add);
      } catch (IOException e) {
        // the directory went away
      }
    }
    for (Path p : candidates) {
      try {
        String id = FileIdentity.of(p);
        if (id == null
            || id.equals(old.identity())
            || tracked.containsKey(id)
            || dormant.containsKey(id)
            || isRetiring(id)) {
          continue;
        }
        boolean same;
        try (FileChannel c = FileIdentity.openRegular(p, id)) {
          same =
              c.size() >= old.position()
                  && TailedFile.fingerprint(c, old.headLength()) == old.headHash();
        }
        if (same) {
          TailedFile copy =
              new TailedFile(p, id, old, maxLineBytes, now, criCounter(Path.of(old.path())));
          if (present.containsKey(id)) {
            tracked.put(id, copy); // the copy matches the glob: follow it as the old stream
          } else {
            drain(copy, sink, now);
            retiring.add(copy);
          }
          recovered.incrementAndGet();
          return;
        }
      } catch (FileIdentity.NotRegularFileException e) {
        refused.refuse(p, e.getMessage());
      } catch (IOException e) {
        LOG.warn("looking at {} for a rotated copy: {}", p, e.toString());
      }
    }
  }

  /**
   * A new file named after a followed one ({@code train.log.1}, {@code train.log-20261122}) that
   * starts with the same bytes is a copy of that stream (copytruncate's first step): its content is
   * not new, so it is not read as a stream of its own. It is claimed if the original is truncated.
   */
  private boolean isRotatedCopy(Path p, Map<String, List<FilePosition>> followedByName) {
    String name = p.getFileName().toString();
    for (int end = name.length() - 1; end > 0; end--) {
      for (FilePosition pos : followedByName.getOrDefault(name.substring(0, end), List.of())) {
        if (pos.headLength() <= 0) {
          continue;
        }
        try (FileChannel c = FileIdentity.openRegular(p, null)) {
          if (TailedFile.fingerprint(c, pos.headLength()) == pos.headHash()) {
            return true;
          }
        } catch (IOException e) {
          return false;
        }
      }
    }
    return false;
  }

  /** Followed files (open or idle) by file name, for {@link #isRotatedCopy}. */
  private Map<String, List<FilePosition>> followedByName() {
    Map<String, List<FilePosition>> out = new HashMap<>();
    List<FilePosition> all = new ArrayList<>(dormant.values());
    for (TailedFile f : tracked.values()) {
      all.add(f.position());
    }
    for (FilePosition pos : all) {
      Path name = Path.of(pos.path()).getFileName();
      if (name != null) {
        out.computeIfAbsent(name.toString(), k -> new ArrayList<>()).add(pos);
      }
    }
    return out;
  }

  private static Path findSibling(Path last, String identity) {
    Path dir = last.toAbsolutePath().getParent();
    if (dir == null || !Files.isDirectory(dir)) {
      return null;
    }
    try (var s = Files.list(dir)) {
      for (Path p : s.filter(x -> Files.isRegularFile(x, LinkOption.NOFOLLOW_LINKS)).toList()) {
        if (identity.equals(FileIdentity.of(p))) {
          return p;
        }
      }
    } catch (IOException e) {
      return null;
    }
    return null;
  }

  private static boolean replaced(Path p, FilePosition cp) throws IOException {
    try (FileChannel c = FileIdentity.openRegular(p, cp.identity())) {
      return c.size() < cp.position()
          || (cp.headLength() > 0 && TailedFile.fingerprint(c, cp.headLength()) != cp.headHash());
    }
  }

  private TailedFile open(Path p, String id, FilePosition from, long now) {
    try {
      TailedFile f = new TailedFile(p, id, from, maxLineBytes, now, criCounter(p));
      tracked.put(id, f);
      return f;
    } catch (FileIdentity.NotRegularFileException e) {
      refused.refuse(p, e.getMessage());
    } catch (java.nio.file.AccessDeniedException e) {
      openFailures.incrementAndGet();
    } catch (IOException e) {
      openFailures.incrementAndGet();
      LOG.warn("cannot open {}: {}", p, e.toString());
    }
    if (from != null) {
      dormant.put(id, from); // keep its position: it may be readable again later
    }
    return null;
  }

  /** The malformed-line counter when {@code p} is a CRI container log, else null (plain). */
  private AtomicLong criCounter(Path p) {
    for (GlobScanner m : criMatchers) {
      if (m.matches(p)) {
        return criMalformed;
      }
    }
    return null;
  }

  private boolean isRetiring(String id) {
    for (TailedFile f : retiring) {
      if (f.identity.equals(id)) {
        return true;
      }
    }
    return false;
  }

  private long retireAcknowledged(LineSink sink, long now) {
    long total = 0;
    for (Iterator<TailedFile> it = retiring.iterator(); it.hasNext(); ) {
      TailedFile f = it.next();
      if (f.rewindIfFailed(now, REWIND_BACKOFF_MS)) {
        rewinds.incrementAndGet();
        total += drain(f, sink, now); // a line failed: read the rest again through the handle
      } else if (f.ackedPosition() >= f.readPosition()) {
        closeQuietly(f);
        it.remove();
      }
    }
    return total;
  }

  private long drain(TailedFile f, LineSink sink, long now) {
    try {
      long n = f.read(buf, Long.MAX_VALUE, sink, now);
      f.flushPartial(sink);
      if (quietMarkerMs > 0) {
        f.markQuiet(sink, now, 0); // read to its end: it will not grow under this name again
      }
      return n;
    } catch (IOException e) {
      LOG.warn("draining {}: {}", f.path, e.toString());
      return 0;
    }
  }

  /**
   * Positions to checkpoint, by identity: every followed file (open or closed while idle), and
   * every one not fully acknowledged.
   */
  public Map<String, FilePosition> positions() {
    Map<String, FilePosition> out = new TreeMap<>();
    checkpoint.forEach(out::put);
    dormant.forEach(out::put);
    for (TailedFile f : tracked.values()) {
      out.put(f.identity, f.position());
    }
    for (TailedFile f : retiring) {
      out.put(f.identity, f.position());
    }
    return out;
  }

  /** Unacknowledged bytes per followed file: how far shipping lags behind the file. */
  public Map<String, Long> lagBytes() {
    Map<String, Long> out = new HashMap<>();
    for (TailedFile f : tracked.values()) {
      try {
        out.put(f.path.toString(), Math.max(0, f.size() - f.ackedPosition()));
      } catch (IOException e) {
        out.put(f.path.toString(), 0L);
      }
    }
    return out;
  }

  /** Files open now (followed, or draining after a rename or deletion). */
  public int openFiles() {
    return openCount;
  }

  /** Files closed while idle, kept as positions and reopened when they grow. */
  public int idleFiles() {
    return idleCount;
  }

  public long rotations() {
    return rotations.get();
  }

  public long truncations() {
    return truncations.get();
  }

  public long recovered() {
    return recovered.get();
  }

  /** Files closed after {@code close_inactive_ms} without growth. */
  public long closedInactive() {
    return closedInactive.get();
  }

  /** Times a file was read again from its acknowledged position after a line failed. */
  public long rewinds() {
    return rewinds.get();
  }

  /** Links, pipes and devices matching a glob that were not read (each counted once). */
  public long refused() {
    return refused.count();
  }

  /** Lines of CRI container logs not in the CRI format, passed through as they were. */
  public long criMalformed() {
    return criMalformed.get();
  }

  public long unreadable() {
    return openFailures.get() + scanners.stream().mapToLong(GlobScanner::unreadable).sum();
  }

  private static void closeQuietly(TailedFile f) {
    try {
      f.close();
    } catch (IOException e) {
      // read-only channel
    }
  }

  @Override
  public void close() {
    tracked.values().forEach(FileTailer::closeQuietly);
    tracked.clear();
    retiring.forEach(FileTailer::closeQuietly);
    retiring.clear();
  }
}
