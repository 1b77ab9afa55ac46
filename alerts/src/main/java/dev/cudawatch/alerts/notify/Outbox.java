package dev.cudawatch.alerts.notify;

import dev.cudawatch.common.io.AtomicFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.BiConsumer;
import java.util.stream.Stream;

/**
 * Notifications waiting for delivery, one file each under {@code dir/RECEIVER/}, written to a
 * temporary file, synced and renamed into place before anyone is told. A notification leaves only
 * once its receiver took it, so a restart re-sends what was in flight (at least once, never lost).
 * Bounded per receiver: past {@code maxEntries} the oldest is dropped and reported.
 */
public final class Outbox {
  private final Path dir;
  private final int maxEntries;
  private final BiConsumer<String, String> onDrop; // receiver, reason
  private final Map<String, TreeMap<Long, Path>> pending = new HashMap<>();
  private long nextSeq;

  /** A notification in the outbox. */
  public record Entry(String receiver, long seq, byte[] payload) {}

  public Outbox(Path dir, int maxEntries, BiConsumer<String, String> onDrop) {
    this.dir = dir;
    this.maxEntries = maxEntries;
    this.onDrop = onDrop;
    try {
      Files.createDirectories(dir);
      try (Stream<Path> receivers = Files.list(dir)) {
        for (Path r : receivers.filter(Files::isDirectory).toList()) {
          TreeMap<Long, Path> q = new TreeMap<>();
          try (Stream<Path> files = Files.list(r)) {
            for (Path f : files.toList()) {
              String n = f.getFileName().toString();
              if (n.endsWith(".json") && n.matches("\\d+\\.json")) {
                long seq = Long.parseLong(n.substring(0, n.length() - 5));
                q.put(seq, f);
                nextSeq = Math.max(nextSeq, seq + 1);
              } else if (n.endsWith(".tmp")) {
                Files.deleteIfExists(f); // a write cut short: it was never acknowledged to anyone
              }
            }
          }
          pending.put(r.getFileName().toString(), q);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("outbox " + dir + ": " + e.getMessage(), e);
    }
  }

  /** Stores a notification durably; returns once it is on disk. */
  public synchronized void add(String receiver, byte[] payload) {
    TreeMap<Long, Path> q = pending.computeIfAbsent(receiver, k -> new TreeMap<>());
    long seq = nextSeq++;
    Path rdir = dir.resolve(receiver);
    Path file = rdir.resolve(String.format("%020d.json", seq));
    try {
      AtomicFiles.write(file, payload);
    } catch (IOException e) {
      throw new UncheckedIOException("outbox: cannot store a notification: " + e.getMessage(), e);
    }
    q.put(seq, file);
    while (q.size() > maxEntries) {
      Map.Entry<Long, Path> oldest = q.pollFirstEntry();
      delete(oldest.getValue());
      onDrop.accept(receiver, "outbox_full");
    }
    notifyAll();
  }

  /** The oldest notification for {@code receiver}, waiting up to {@code waitMs} for one. */
  public synchronized Optional<Entry> next(String receiver, long waitMs)
      throws InterruptedException {
    long deadline = System.nanoTime() / 1_000_000 + waitMs; // monotonic: a wait, not a date
    while (true) {
      TreeMap<Long, Path> q = pending.get(receiver);
      if (q != null && !q.isEmpty()) {
        Map.Entry<Long, Path> e = q.firstEntry();
        try {
          return Optional.of(new Entry(receiver, e.getKey(), Files.readAllBytes(e.getValue())));
        } catch (IOException ex) {
          q.pollFirstEntry(); // unreadable: it cannot be sent; say so rather than loop on it
          onDrop.accept(receiver, "unreadable");
          continue;
        }
      }
      long left = deadline - System.nanoTime() / 1_000_000;
      if (left <= 0) {
        return Optional.empty();
      }
      wait(left);
    }
  }

  /** Forgets a delivered (or rejected) notification. */
  public synchronized void remove(Entry e) {
    TreeMap<Long, Path> q = pending.get(e.receiver());
    Path f = q == null ? null : q.remove(e.seq());
    if (f != null) {
      delete(f);
    }
  }

  public synchronized int size(String receiver) {
    TreeMap<Long, Path> q = pending.get(receiver);
    return q == null ? 0 : q.size();
  }

  private static void delete(Path f) {
    try {
      Files.deleteIfExists(f);
    } catch (IOException e) {
      throw new UncheckedIOException("outbox: cannot delete " + f.getFileName(), e);
    }
  }
}
