package dev.cudawatch.ingest.files;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.AccessDeniedException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows the files matching some globs. Each {@link #poll} discovers new files, notices rotation
 * by rename (the path now names another inode: the old file is drained first), copytruncate and
 * reused inodes (read again from byte 0 as a new generation), and deletion (the open file is
 * drained, then released), and reads what was appended.
 */
public final class FileTailer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(FileTailer.class);

  private final List<GlobScanner> scanners = new ArrayList<>();
  private final Map<Path, TailedFile> open = new HashMap<>();
  private final Map<String, FilePosition> checkpoint;
  private final int maxLineBytes;
  private final long readBudget;
  private final ByteBuffer buf = ByteBuffer.allocate(64 * 1024);
  private final AtomicLong rotations = new AtomicLong();
  private final AtomicLong truncations = new AtomicLong();
  private final AtomicLong openFailures = new AtomicLong();

  /**
   * @param globs what to follow
   * @param checkpoint positions from the last run (path to position)
   * @param maxLineBytes longer lines are cut
   * @param readBudget bytes read per file per poll, so one busy file cannot starve the others
   */
  public FileTailer(
      List<String> globs, Map<String, FilePosition> checkpoint, int maxLineBytes, long readBudget) {
    for (String g : globs) {
      scanners.add(new GlobScanner(g));
    }
    this.checkpoint = new HashMap<>(checkpoint);
    this.maxLineBytes = maxLineBytes;
    this.readBudget = readBudget;
  }

  /** One round: drain rotated or deleted files, discover new ones, read. Returns bytes read. */
  public long poll(LineSink sink) {
    long total = 0;
    for (Iterator<Map.Entry<Path, TailedFile>> it = open.entrySet().iterator(); it.hasNext(); ) {
      TailedFile f = it.next().getValue();
      try {
        if (!f.identity.equals(FileIdentity.of(f.path))) {
          // renamed away or deleted: drain what the old file still holds, then let it go
          total += drain(f, sink);
          f.close();
          it.remove();
          rotations.incrementAndGet();
        }
      } catch (IOException e) {
        LOG.warn("checking {} failed: {}", f.path, e.toString());
      }
    }
    Set<Path> seen = new TreeSet<>();
    for (GlobScanner s : scanners) {
      seen.addAll(s.scan());
    }
    for (Path p : seen) {
      if (!open.containsKey(p)) {
        openFile(p, checkpoint.remove(p.toString()));
      }
    }
    for (TailedFile f : open.values()) {
      try {
        if (f.wasReplaced()) {
          truncations.incrementAndGet();
          f.restart();
        }
        total += f.read(buf, readBudget, sink);
      } catch (IOException e) {
        LOG.warn("reading {} failed: {}", f.path, e.toString());
      }
    }
    return total;
  }

  private void openFile(Path p, FilePosition from) {
    try {
      String id = FileIdentity.of(p);
      if (id == null) {
        return;
      }
      FilePosition start = from != null && id.equals(from.identity()) ? from : null;
      open.put(p, new TailedFile(p, id, start, maxLineBytes));
    } catch (AccessDeniedException e) {
      openFailures.incrementAndGet();
    } catch (IOException e) {
      openFailures.incrementAndGet();
      LOG.warn("cannot open {}: {}", p, e.toString());
    }
  }

  private long drain(TailedFile f, LineSink sink) throws IOException {
    long n = f.read(buf, Long.MAX_VALUE, sink);
    f.flushPartial(sink);
    return n;
  }

  /** Positions to checkpoint: acknowledged bytes of every open file. */
  public Map<String, FilePosition> positions() {
    Map<String, FilePosition> out = new HashMap<>(checkpoint); // files not seen yet keep theirs
    for (TailedFile f : open.values()) {
      out.put(f.path.toString(), f.position());
    }
    return out;
  }

  /** Unacknowledged bytes per open file: how far shipping lags behind reading. */
  public Map<String, Long> lagBytes() {
    Map<String, Long> out = new HashMap<>();
    for (TailedFile f : open.values()) {
      try {
        out.put(f.path.toString(), Math.max(0, f.size() - f.ackedPosition()));
      } catch (IOException e) {
        out.put(f.path.toString(), 0L);
      }
    }
    return out;
  }

  public int openFiles() {
    return open.size();
  }

  public long rotations() {
    return rotations.get();
  }

  public long truncations() {
    return truncations.get();
  }

  public long unreadable() {
    return openFailures.get() + scanners.stream().mapToLong(GlobScanner::unreadable).sum();
  }

  @Override
  public void close() throws IOException {
    for (TailedFile f : open.values()) {
      f.close();
    }
    open.clear();
  }
}
