package dev.cudawatch.ingest.run;

import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.WireFormatException;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.ingest.spool.DiskSpool;
import dev.cudawatch.ingest.spool.SpoolCursor;
import dev.cudawatch.ingest.streams.SpoolingOutput;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent's side of the run-spool handoff (see {@link RunSpools}): every few seconds, finds the
 * spools that runs left (of finished runs only: a live run's spool is locked), moves their records
 * into the agent's own spool, which ships them, and deletes them once that is durable. One spool at
 * a time, at most {@code maxPerScan} a scan: what it holds at once is bounded, and a crash in
 * between repeats records (same ids, dropped by the processor), never loses them.
 *
 * <p>Nothing in a spool is trusted. Directories are opened relative to their parent without
 * following links ({@link SecureDirectoryStream}: a directory swapped for a link after the check is
 * not entered), the owner of every user directory, run directory and segment must be the user the
 * directory is named for, and each record is parsed: its host is replaced by this node's (a
 * mismatch is counted), its id and key are made again from it, and the verified owner is recorded
 * as {@code spool_owner}. What is refused stays where it is, logged and counted once per path by
 * reason ({@code link}, {@code owner}, {@code unreadable}, {@code version}); a record that is not a
 * record is counted ({@code malformed}) and dropped.
 */
public final class RunSpoolAdoption implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(RunSpoolAdoption.class);
  private static final Pattern SEGMENT = Pattern.compile("\\d{20}\\.seg");
  private static final int REMEMBERED = 10_000;

  /** A directory holding run spools: per user ({@code cudawatch-run-USER/RUN-ID}) or flat. */
  public record Root(Path dir, boolean perUser) {}

  private final List<Root> roots;
  private final String host;
  private final SpoolingOutput out;
  private final Clock clock;
  private final Duration scanInterval;
  private final Duration unlockedGrace;
  private final int maxPerScan;
  private final Map<String, AtomicLong> refused = new ConcurrentHashMap<>();
  private final Set<String> refusedPaths = new LinkedHashSet<>();
  private final AtomicLong adopted = new AtomicLong();
  private final AtomicLong records = new AtomicLong();
  private final AtomicLong hostMismatches = new AtomicLong();
  private final AtomicLong tornBytes = new AtomicLong();
  private volatile boolean running = true;

  /**
   * @param unlockedGrace a run directory without a lock file (the previous release's, or one a run
   *     is creating right now) is adopted only once it has not changed for this long
   */
  public RunSpoolAdoption(
      List<Root> roots,
      String host,
      SpoolingOutput out,
      Clock clock,
      Duration scanInterval,
      Duration unlockedGrace,
      int maxPerScan) {
    this.roots = List.copyOf(roots);
    this.host = host;
    this.out = out;
    this.clock = clock;
    this.scanInterval = scanInterval;
    this.unlockedGrace = unlockedGrace;
    this.maxPerScan = maxPerScan;
    for (String reason : List.of("link", "owner", "unreadable", "version", "malformed")) {
      refused.put(reason, new AtomicLong());
    }
  }

  /** The roots the agent looks in: the handoff root, and the previous release's layout. */
  public static List<Root> roots(String runSpoolRoot, String stateDir) {
    return List.of(
        new Root(RunSpools.effectiveRoot(Path.of(runSpoolRoot)), true),
        new Root(Path.of(stateDir, "spool-run"), false)); // release 61b97b9 and before
  }

  @Override
  public void run() {
    while (running) {
      scan();
      try {
        Thread.sleep(scanInterval.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  public void stop() {
    running = false;
  }

  /** One pass over every root; returns the spools adopted. */
  public int scan() {
    int n = 0;
    for (Root r : roots) {
      try {
        n += scan(r, maxPerScan - n);
      } catch (IOException | RuntimeException e) {
        LOG.warn("run spools under {}: {}", r.dir(), e.toString());
      }
    }
    return n;
  }

  private int scan(Root root, int budget) throws IOException {
    if (budget <= 0 || !Files.isDirectory(root.dir(), LinkOption.NOFOLLOW_LINKS)) {
      return 0;
    }
    int n = 0;
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(root.dir())) {
      if (!(ds instanceof SecureDirectoryStream<Path> top)) {
        refuse(root.dir(), "unreadable", "no secure directory access on this platform");
        return 0;
      }
      String rootOwner = attrs(top).owner().getName();
      for (Path entry : names(top)) {
        String name = entry.getFileName().toString();
        if (n >= budget) {
          break;
        }
        if (!root.perUser()) {
          n += adopt(top, root.dir(), name, rootOwner) ? 1 : 0; // the agent's own state
        } else if (name.startsWith(RunSpools.PREFIX)) {
          n += adoptUser(top, root.dir().resolve(name), name, budget - n);
        }
      }
    }
    return n;
  }

  private int adoptUser(SecureDirectoryStream<Path> top, Path path, String name, int budget) {
    Path rel = Path.of(name);
    try {
      PosixFileAttributes a = attrs(top, rel);
      if (!a.isDirectory()) {
        refuse(path, "link", "not a directory");
        return 0;
      }
      if (!RunSpools.userDirName(a.owner().getName()).equals(name)) {
        refuse(path, "owner", "belongs to " + a.owner().getName());
        return 0;
      }
      try (SecureDirectoryStream<Path> user =
          top.newDirectoryStream(rel, LinkOption.NOFOLLOW_LINKS)) {
        String owner = attrs(user).owner().getName(); // of what was opened, not of the name
        if (!RunSpools.userDirName(owner).equals(name)) {
          refuse(path, "owner", "belongs to " + owner);
          return 0;
        }
        int n = 0;
        for (Path run : names(user)) {
          if (n >= budget) {
            break;
          }
          n += adopt(user, path, run.getFileName().toString(), owner) ? 1 : 0;
        }
        return n;
      }
    } catch (AccessDeniedException e) {
      refuse(path, "unreadable", "permission denied");
    } catch (IOException | RuntimeException e) {
      refuse(path, "unreadable", e.toString());
    }
    return 0;
  }

  /** Adopts one run's spool; true when it was shipped into the agent's spool and removed. */
  private boolean adopt(
      SecureDirectoryStream<Path> parent, Path parentPath, String name, String owner) {
    Path path = parentPath.resolve(name);
    Path rel = Path.of(name);
    if (name.startsWith(".")) {
      return false; // being created
    }
    try {
      PosixFileAttributes a = attrs(parent, rel);
      if (!a.isDirectory()) {
        refuse(path, "link", "not a directory");
        return false;
      }
      if (!a.owner().getName().equals(owner)) {
        refuse(path, "owner", "belongs to " + a.owner().getName() + ", not " + owner);
        return false;
      }
      try (SecureDirectoryStream<Path> run =
          parent.newDirectoryStream(rel, LinkOption.NOFOLLOW_LINKS)) {
        PosixFileAttributes opened = attrs(run);
        if (!opened.owner().getName().equals(owner)) {
          refuse(path, "owner", "belongs to " + opened.owner().getName() + ", not " + owner);
          return false;
        }
        Map<String, PosixFileAttributes> files = new TreeMap<>();
        for (Path f : names(run)) {
          files.put(f.getFileName().toString(), attrs(run, f.getFileName()));
        }
        if (!finished(run, path, files, opened)) {
          return false;
        }
        return ship(run, path, files, owner) && remove(parent, run, rel, path, files);
      }
    } catch (NoSuchFileException gone) {
      return false; // removed meanwhile (by its run after a late drain)
    } catch (AccessDeniedException e) {
      refuse(path, "unreadable", "permission denied");
    } catch (IOException | RuntimeException e) {
      refuse(path, "unreadable", e.toString());
    }
    return false;
  }

  /** A run is finished when nobody holds its spool's lock (or, without one, it is old enough). */
  private boolean finished(
      SecureDirectoryStream<Path> run,
      Path path,
      Map<String, PosixFileAttributes> files,
      PosixFileAttributes dir)
      throws IOException {
    PosixFileAttributes lock = files.get(DiskSpool.LOCK);
    if (lock == null) {
      Duration age = Duration.between(dir.lastModifiedTime().toInstant(), clock.instant());
      return age.compareTo(unlockedGrace) >= 0;
    }
    if (!lock.isRegularFile()) {
      refuse(path.resolve(DiskSpool.LOCK), "link", "not a regular file");
      return false;
    }
    try (var ch =
        run.newByteChannel(
            Path.of(DiskSpool.LOCK), Set.of(StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS))) {
      if (!(ch instanceof FileChannel fc)) {
        return false;
      }
      try {
        var held = fc.tryLock(0, Long.MAX_VALUE, true);
        if (held == null) {
          return false; // the run is still writing it
        }
        held.release();
        return true;
      } catch (OverlappingFileLockException sameProcess) {
        return false; // a run inside this process (tests) holds it
      }
    }
  }

  private boolean ship(
      SecureDirectoryStream<Path> run,
      Path path,
      Map<String, PosixFileAttributes> files,
      String owner)
      throws IOException {
    long[] cursor = cursor(run, files, owner);
    List<String> segments =
        files.keySet().stream().filter(n -> SEGMENT.matcher(n).matches()).toList();
    // every segment is checked before any is read: a refused one leaves the whole spool as it is,
    // so nothing is shipped twice on the next scan
    for (String seg : segments) {
      PosixFileAttributes a = files.get(seg);
      if (!a.isRegularFile()) {
        refuse(path.resolve(seg), "link", "not a regular file");
        return false;
      }
      if (!a.owner().getName().equals(owner)) {
        refuse(path.resolve(seg), "owner", "written by " + a.owner().getName() + ", not " + owner);
        return false;
      }
      try (InputStream in = open(run, seg)) {
        DiskSpool.segmentFormat(in);
      } catch (DiskSpool.UnsupportedSegmentException e) {
        refuse(path.resolve(seg), "version", e.getMessage());
        return false;
      }
    }
    long before = records.get();
    for (String seg : segments) {
      long seq = Long.parseLong(seg.substring(0, 20));
      if (seq < cursor[0]) {
        continue; // shipped by the run itself
      }
      try (InputStream in = open(run, seg)) {
        long torn =
            DiskSpool.readSegment(in, seq == cursor[0] ? cursor[1] : 0, b -> take(b, owner));
        if (torn > 0) {
          tornBytes.addAndGet(torn);
          LOG.warn(
              "run spool segment {} ends with {} bytes of a cut record", path.resolve(seg), torn);
        }
      } catch (java.io.UncheckedIOException full) {
        // the agent's own spool cannot be written (a full disk): the run's stays for a later scan
        LOG.warn("cannot move run spool {} into the agent's spool: {}", path, full.getMessage());
        return false;
      }
    }
    out.sync(); // durable in the agent's spool before the run's copy goes
    adopted.incrementAndGet();
    LOG.info("adopted run spool {}: {} records", path, records.get() - before);
    return true;
  }

  private static InputStream open(SecureDirectoryStream<Path> dir, String name) throws IOException {
    return Channels.newInputStream(
        dir.newByteChannel(
            Path.of(name), Set.of(StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)));
  }

  /** The run's own cursor: what its forwarder shipped before it gave up; start when unreadable. */
  private long[] cursor(
      SecureDirectoryStream<Path> run, Map<String, PosixFileAttributes> files, String owner) {
    PosixFileAttributes a = files.get("cursor");
    if (a == null || !a.isRegularFile() || !a.owner().getName().equals(owner)) {
      return new long[] {0, 0};
    }
    try (InputStream in =
        Channels.newInputStream(
            run.newByteChannel(
                Path.of("cursor"), Set.of(StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)))) {
      SpoolCursor c = SpoolCursor.decode(in.readNBytes(256), "the run's spool cursor");
      return new long[] {c.segment(), c.offset()};
    } catch (IOException | RuntimeException e) {
      // corrupt, or of a newer release: read all again (repeats are dropped by id), never skip
      return new long[] {0, 0};
    }
  }

  /** One spooled record, made this node's: host from the agent, id and key made again. */
  private void take(byte[] entry, String owner) {
    LogRecord r;
    try {
      ByteBuffer b = ByteBuffer.wrap(entry);
      int klen = b.getShort() & 0xffff;
      r = WireJson.readLogRecord(Arrays.copyOfRange(entry, 2 + klen, entry.length));
    } catch (WireFormatException | RuntimeException e) {
      refused.get("malformed").incrementAndGet();
      return;
    }
    if (!host.equals(r.host())) {
      hostMismatches.incrementAndGet();
    }
    out.write(asThisNode(r, host, owner));
    records.incrementAndGet();
  }

  static LogRecord asThisNode(LogRecord r, String host, String owner) {
    String prefix = r.host() + ":";
    String id =
        r.id().startsWith(prefix)
            ? host + ":" + r.id().substring(prefix.length())
            : LogRecord.idOf(host, r.source(), r.sourceId(), r.offset());
    Map<String, String> a =
        r.attribution() == null ? new LinkedHashMap<>() : new LinkedHashMap<>(r.attribution());
    a.put("spool_owner", owner);
    return new LogRecord(
        r.v(),
        id,
        host,
        r.job(),
        r.rank(),
        r.localRank(),
        r.gpu(),
        r.kind(),
        r.stream(),
        r.source(),
        r.sourceId(),
        r.offset(),
        r.eventTime(),
        r.ingestTime(),
        r.text(),
        r.lineCount(),
        r.raw(),
        r.gpuUuid(),
        a);
  }

  /** Deletes what the run left (its known files only), then its directory. */
  private boolean remove(
      SecureDirectoryStream<Path> parent,
      SecureDirectoryStream<Path> run,
      Path rel,
      Path path,
      Map<String, PosixFileAttributes> files) {
    try {
      for (String f : files.keySet()) {
        if (SEGMENT.matcher(f).matches()
            || f.equals("cursor")
            || f.equals(DiskSpool.LOCK)
            || (f.startsWith(".") && (f.endsWith(".tmp") || f.endsWith(".new")))) {
          run.deleteFile(Path.of(f));
        }
      }
      parent.deleteDirectory(rel);
      return true;
    } catch (IOException e) {
      LOG.warn("run spool {} was shipped but cannot be removed: {}", path, e.toString());
      return false;
    }
  }

  private static List<Path> names(SecureDirectoryStream<Path> ds) {
    List<Path> out = new ArrayList<>();
    for (Path p : ds) {
      out.add(p.getFileName());
    }
    return out;
  }

  private static PosixFileAttributes attrs(SecureDirectoryStream<Path> ds) throws IOException {
    return ds.getFileAttributeView(PosixFileAttributeView.class).readAttributes();
  }

  private static PosixFileAttributes attrs(SecureDirectoryStream<Path> ds, Path rel)
      throws IOException {
    return ds.getFileAttributeView(rel, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
        .readAttributes();
  }

  private void refuse(Path p, String reason, String why) {
    synchronized (refusedPaths) {
      if (!refusedPaths.add(reason + " " + p)) {
        return;
      }
      if (refusedPaths.size() > REMEMBERED) {
        var it = refusedPaths.iterator();
        it.next();
        it.remove();
      }
    }
    refused.get(reason).incrementAndGet();
    LOG.warn("refusing run spool {} ({}): {}", p, reason, why);
  }

  /** Paths refused (counted once each) and malformed records, by reason. */
  public Map<String, Long> refused() {
    Map<String, Long> m = new TreeMap<>();
    refused.forEach((k, v) -> m.put(k, v.get()));
    return m;
  }

  public long adopted() {
    return adopted.get();
  }

  public long records() {
    return records.get();
  }

  public long hostMismatches() {
    return hostMismatches.get();
  }

  public long tornBytes() {
    return tornBytes.get();
  }
}
