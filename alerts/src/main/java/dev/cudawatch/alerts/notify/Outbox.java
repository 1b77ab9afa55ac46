package dev.cudawatch.alerts.notify;

import dev.cudawatch.common.io.AtomicFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.BiConsumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Notifications waiting for delivery, one file each under {@code dir/RECEIVER/}, written by {@link
 * AtomicFiles} before anyone is told. A notification leaves only once its receiver took it, so a
 * restart re-sends what was in flight (at least once, never lost). The file name carries the
 * sequence, when it was queued and when it goes stale ({@code SEQ-CREATED-EXPIRES.json}, epoch
 * milliseconds, 0 for never). Bounded per receiver in entries and in bytes: past either the oldest
 * is dropped and reported. A notification given up after its maximum age is moved to {@code
 * deadDir/RECEIVER/} (the newest {@link #DEAD_KEPT} kept) for an operator to read.
 */
public final class Outbox {
  static final int DEAD_KEPT = 100;
  private static final Pattern NAME = Pattern.compile("(\\d+)(?:-(\\d+)-(\\d+))?\\.json");

  private final Path dir;
  private final Path deadDir;
  private final int maxEntries;
  private final long maxBytes;
  private final BiConsumer<String, String> onDrop; // receiver, reason
  private final Map<String, TreeMap<Long, Item>> pending = new HashMap<>();
  private final Map<String, Long> bytes = new HashMap<>();
  private long nextSeq;

  /** A notification in the outbox; {@code expiresAtMs} 0 when it never goes stale. */
  public record Entry(
      String receiver, long seq, byte[] payload, long createdAtMs, long expiresAtMs) {}

  private record Item(Path file, long size, long createdAtMs, long expiresAtMs) {}

  public Outbox(Path dir, int maxEntries, BiConsumer<String, String> onDrop) {
    this(dir, dir.resolveSibling(dir.getFileName() + "-dead"), maxEntries, Long.MAX_VALUE, onDrop);
  }

  public Outbox(
      Path dir, Path deadDir, int maxEntries, long maxBytes, BiConsumer<String, String> onDrop) {
    this.dir = dir;
    this.deadDir = deadDir;
    this.maxEntries = maxEntries;
    this.maxBytes = maxBytes;
    this.onDrop = onDrop;
    try {
      Files.createDirectories(dir);
      try (Stream<Path> receivers = Files.list(dir)) {
        for (Path r : receivers.filter(Files::isDirectory).toList()) {
          String receiver = r.getFileName().toString();
          TreeMap<Long, Item> q = new TreeMap<>();
          pending.put(receiver, q);
          AtomicFiles.clearTemps(r); // a write cut short: it was never acknowledged to anyone
          try (Stream<Path> files = Files.list(r)) {
            for (Path f : files.toList()) {
              String n = f.getFileName().toString();
              Matcher m = NAME.matcher(n);
              if (m.matches()) {
                long seq = Long.parseLong(m.group(1));
                long created = m.group(2) == null ? 0 : Long.parseLong(m.group(2));
                long expires = m.group(3) == null ? 0 : Long.parseLong(m.group(3));
                q.put(seq, new Item(f, Files.size(f), created, expires));
                bytes.merge(receiver, Files.size(f), Long::sum);
                nextSeq = Math.max(nextSeq, seq + 1);
              } else if (n.endsWith(".tmp")) {
                Files.deleteIfExists(f); // a temporary of an older version
              }
            }
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("outbox " + dir + ": " + e.getMessage(), e);
    }
  }

  /** Stores a notification that never goes stale; returns once it is on disk. */
  public void add(String receiver, byte[] payload) {
    add(receiver, payload, 0, 0);
  }

  /**
   * Stores a notification durably, queued at {@code createdAtMs} and stale from {@code expiresAtMs}
   * (0: never); returns once it is on disk, or throws (a full disk) having stored nothing.
   */
  public synchronized void add(
      String receiver, byte[] payload, long createdAtMs, long expiresAtMs) {
    TreeMap<Long, Item> q = pending.computeIfAbsent(receiver, k -> new TreeMap<>());
    long seq = nextSeq++;
    Path file =
        dir.resolve(receiver)
            .resolve(String.format("%020d-%d-%d.json", seq, createdAtMs, expiresAtMs));
    try {
      AtomicFiles.write(file, payload);
    } catch (IOException e) {
      throw new UncheckedIOException("outbox: cannot store a notification: " + e.getMessage(), e);
    }
    q.put(seq, new Item(file, payload.length, createdAtMs, expiresAtMs));
    bytes.merge(receiver, (long) payload.length, Long::sum);
    while (!q.isEmpty() && (q.size() > maxEntries || bytes(receiver) > maxBytes)) {
      Map.Entry<Long, Item> oldest = q.pollFirstEntry();
      forget(receiver, oldest.getValue());
      delete(oldest.getValue().file());
      onDrop.accept(receiver, "outbox_full");
    }
    notifyAll();
  }

  /** The oldest notification for {@code receiver}, waiting up to {@code waitMs} for one. */
  public synchronized Optional<Entry> next(String receiver, long waitMs)
      throws InterruptedException {
    long deadline = System.nanoTime() / 1_000_000 + waitMs; // monotonic: a wait, not a date
    while (true) {
      TreeMap<Long, Item> q = pending.get(receiver);
      if (q != null && !q.isEmpty()) {
        Map.Entry<Long, Item> e = q.firstEntry();
        Item it = e.getValue();
        try {
          return Optional.of(
              new Entry(
                  receiver,
                  e.getKey(),
                  Files.readAllBytes(it.file()),
                  it.createdAtMs(),
                  it.expiresAtMs()));
        } catch (IOException ex) {
          q.pollFirstEntry(); // unreadable: it cannot be sent; say so rather than loop on it
          forget(receiver, it);
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
    Item it = take(e);
    if (it != null) {
      delete(it.file());
    }
  }

  /**
   * Gives a notification up: moves it to the dead-letter directory (a rename: it needs no free
   * space) and keeps the newest {@link #DEAD_KEPT} there.
   */
  public synchronized void deadLetter(Entry e) {
    Item it = take(e);
    if (it == null) {
      return;
    }
    Path to = deadDir.resolve(e.receiver());
    try {
      Files.createDirectories(to);
      Files.move(
          it.file(),
          to.resolve(it.file().getFileName()),
          StandardCopyOption.ATOMIC_MOVE,
          StandardCopyOption.REPLACE_EXISTING);
      AtomicFiles.syncDirectory(to);
      try (Stream<Path> s = Files.list(to)) {
        var kept = s.filter(p -> NAME.matcher(p.getFileName().toString()).matches()).sorted();
        var all = kept.toList();
        for (int i = 0; i < all.size() - DEAD_KEPT; i++) {
          Files.deleteIfExists(all.get(i));
        }
      }
    } catch (IOException ex) {
      delete(it.file()); // it is given up either way: never send it again
    }
  }

  private Item take(Entry e) {
    TreeMap<Long, Item> q = pending.get(e.receiver());
    Item it = q == null ? null : q.remove(e.seq());
    if (it != null) {
      forget(e.receiver(), it);
    }
    return it;
  }

  private void forget(String receiver, Item it) {
    bytes.merge(receiver, -it.size(), Long::sum);
  }

  public synchronized int size(String receiver) {
    TreeMap<Long, Item> q = pending.get(receiver);
    return q == null ? 0 : q.size();
  }

  /** Bytes of the notifications waiting for {@code receiver}. */
  public synchronized long bytes(String receiver) {
    return bytes.getOrDefault(receiver, 0L);
  }

  Path deadDir() {
    return deadDir;
  }

  private static void delete(Path f) {
    try {
      Files.deleteIfExists(f);
    } catch (IOException e) {
      throw new UncheckedIOException("outbox: cannot delete " + f.getFileName(), e);
    }
  }
}
