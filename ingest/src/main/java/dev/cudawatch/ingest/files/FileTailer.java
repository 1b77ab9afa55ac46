package dev.cudawatch.ingest.files;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
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
 *   <li>a file leaves the checkpoint only once the broker acknowledged all its lines.
 * </ul>
 */
public final class FileTailer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(FileTailer.class);

  private final List<GlobScanner> scanners = new ArrayList<>();
  private final Map<String, TailedFile> tracked = new LinkedHashMap<>(); // identity -> file
  private final List<TailedFile> retiring = new ArrayList<>();
  private final Map<String, FilePosition> checkpoint = new HashMap<>(); // identity -> position
  private final int maxLineBytes;
  private final long readBudget;
  private final ByteBuffer buf = ByteBuffer.allocate(64 * 1024);
  private final AtomicLong rotations = new AtomicLong();
  private final AtomicLong truncations = new AtomicLong();
  private final AtomicLong openFailures = new AtomicLong();
  private final AtomicLong recovered = new AtomicLong();
  private boolean first = true;

  public FileTailer(
      List<String> globs, Map<String, FilePosition> positions, int maxLineBytes, long readBudget) {
    for (String g : globs) {
      scanners.add(new GlobScanner(g));
    }
    for (FilePosition p : positions.values()) {
      checkpoint.put(p.identity(), p);
    }
    this.maxLineBytes = maxLineBytes;
    this.readBudget = readBudget;
  }

  /** One round: follow renames, drain what left, pick up new files, read. Returns bytes read. */
  public long poll(LineSink sink) {
    long total = 0;
    retireAcknowledged();
    Map<String, Path> present = new LinkedHashMap<>(); // identity -> path, of matching files now
    for (GlobScanner s : scanners) {
      for (Path p : s.scan()) {
        try {
          String id = FileIdentity.of(p);
          if (id != null) {
            present.putIfAbsent(id, p);
          }
        } catch (IOException e) {
          openFailures.incrementAndGet();
        }
      }
    }
    if (first) {
      first = false;
      total += resumeCheckpointed(present, sink);
    }
    // files that no longer match (renamed away, deleted): read to the end, then let go
    for (Iterator<Map.Entry<String, TailedFile>> it = tracked.entrySet().iterator();
        it.hasNext(); ) {
      TailedFile f = it.next().getValue();
      Path now = present.get(f.identity);
      if (now == null) {
        total += drain(f, sink);
        retiring.add(f);
        it.remove();
        rotations.incrementAndGet();
      } else {
        f.path = now;
      }
    }
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
      claimCopy(old, present, sink);
    }
    for (var e : present.entrySet()) {
      if (!tracked.containsKey(e.getKey())
          && !isRetiring(e.getKey())
          && !isRotatedCopy(e.getValue())) {
        open(e.getValue(), e.getKey(), null);
      }
    }
    for (TailedFile f : tracked.values()) {
      try {
        total += f.read(buf, readBudget, sink);
      } catch (IOException e) {
        LOG.warn("reading {} failed: {}", f.path, e.toString());
      }
    }
    return total;
  }

  /** After a restart: resume each checkpointed file wherever it is now, or finish it. */
  private long resumeCheckpointed(Map<String, Path> present, LineSink sink) {
    long total = 0;
    for (FilePosition cp : new ArrayList<>(checkpoint.values())) {
      Path at = present.get(cp.identity());
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
          claimCopy(cp, present, sink);
          checkpoint.remove(cp.identity());
          continue;
        }
        TailedFile f = open(at, cp.identity(), cp);
        if (f != null && !present.containsKey(cp.identity())) {
          total += drain(f, sink);
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
  private void claimCopy(FilePosition old, Map<String, Path> present, LineSink sink) {
    if (old.headLength() <= 0) {
      return;
    }
    List<Path> candidates = new ArrayList<>(present.values());
    Path dir = Path.of(old.path()).toAbsolutePath().getParent();
    if (dir != null) {
      try (var s = Files.list(dir)) {
        s.filter(Files::isRegularFile)
            .filter(p -> !candidates.contains(p))
            .forEach(candidates::add);
      } catch (IOException e) {
        // the directory went away
      }
    }
    for (Path p : candidates) {
      try {
        String id = FileIdentity.of(p);
        if (id == null || id.equals(old.identity()) || tracked.containsKey(id) || isRetiring(id)) {
          continue;
        }
        boolean same;
        try (FileChannel c = FileChannel.open(p, StandardOpenOption.READ)) {
          same =
              c.size() >= old.position()
                  && TailedFile.fingerprint(c, old.headLength()) == old.headHash();
        }
        if (same) {
          TailedFile copy = new TailedFile(p, id, old, maxLineBytes);
          if (present.containsKey(id)) {
            tracked.put(id, copy); // the copy matches the glob: follow it as the old stream
          } else {
            drain(copy, sink);
            retiring.add(copy);
          }
          recovered.incrementAndGet();
          return;
        }
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
  private boolean isRotatedCopy(Path p) {
    String name = p.getFileName().toString();
    for (TailedFile f : tracked.values()) {
      FilePosition pos = f.position();
      if (pos.headLength() > 0
          && name.startsWith(f.path.getFileName().toString())
          && !name.equals(f.path.getFileName().toString())) {
        try (FileChannel c = FileChannel.open(p, StandardOpenOption.READ)) {
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

  private static Path findSibling(Path last, String identity) {
    Path dir = last.toAbsolutePath().getParent();
    if (dir == null || !Files.isDirectory(dir)) {
      return null;
    }
    try (var s = Files.list(dir)) {
      for (Path p : s.filter(Files::isRegularFile).toList()) {
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
    try (FileChannel c = FileChannel.open(p, StandardOpenOption.READ)) {
      return c.size() < cp.position()
          || (cp.headLength() > 0 && TailedFile.fingerprint(c, cp.headLength()) != cp.headHash());
    }
  }

  private TailedFile open(Path p, String id, FilePosition from) {
    try {
      TailedFile f = new TailedFile(p, id, from, maxLineBytes);
      tracked.put(id, f);
      return f;
    } catch (AccessDeniedException e) {
      openFailures.incrementAndGet();
    } catch (IOException e) {
      openFailures.incrementAndGet();
      LOG.warn("cannot open {}: {}", p, e.toString());
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

  private void retireAcknowledged() {
    for (Iterator<TailedFile> it = retiring.iterator(); it.hasNext(); ) {
      TailedFile f = it.next();
      if (f.ackedPosition() >= f.readPosition()) {
        closeQuietly(f);
        it.remove();
      }
    }
  }

  private long drain(TailedFile f, LineSink sink) {
    try {
      long n = f.read(buf, Long.MAX_VALUE, sink);
      f.flushPartial(sink);
      return n;
    } catch (IOException e) {
      LOG.warn("draining {}: {}", f.path, e.toString());
      return 0;
    }
  }

  /**
   * Positions to checkpoint, by identity: every followed file, and every one not fully
   * acknowledged.
   */
  public Map<String, FilePosition> positions() {
    Map<String, FilePosition> out = new TreeMap<>();
    checkpoint.forEach(out::put);
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

  public int openFiles() {
    return tracked.size() + retiring.size();
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
