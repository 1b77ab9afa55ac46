package dev.cudawatch.ingest.ship;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cudawatch.common.io.AtomicFiles;
import dev.cudawatch.common.wire.WireJson;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Records the broker rejected for good (too large, not authorized, invalid), kept on the node's
 * disk with their reason instead of being skipped: one JSON object per line in {@code
 * dead-letters.jsonl} ({@code 0600}, in a {@code 0700} directory), synced before the record counts
 * as handled. Bounded in bytes: once full, {@link #put} refuses and the sender keeps the record
 * (the file waits, the spool retries), so nothing is dropped unseen.
 *
 * <p>The agent only appends to the file, never reads it back; each line names its {@code format}
 * for the tools that do. Lines of releases up to 5be5e18 have none (format 1: the same fields).
 */
public final class DeadLetters {
  /** The format of each line: 2 = {@code format, time, reason, error, key, record}. */
  public static final int FORMAT = 2;

  private static final Logger LOG = LoggerFactory.getLogger(DeadLetters.class);

  private final Path file;
  private final long maxBytes;
  private final Clock clock;
  private final Map<String, AtomicLong> byReason = new ConcurrentHashMap<>();
  private long bytes;

  public DeadLetters(Path dir, long maxBytes, Clock clock) throws IOException {
    AtomicFiles.createPrivateDirectories(dir);
    this.file = dir.resolve("dead-letters.jsonl");
    this.maxBytes = maxBytes;
    this.clock = clock;
    this.bytes = Files.exists(file) ? Files.size(file) : 0;
  }

  /**
   * Keeps a rejected record durably; false when it could not (full, or the disk failed), in which
   * case the caller must not count the record as handled.
   */
  public synchronized boolean put(String reason, String error, byte[] key, byte[] value) {
    ObjectNode n = WireJson.mapper().createObjectNode();
    n.put("format", FORMAT);
    n.put("time", clock.instant().toString());
    n.put("reason", reason);
    n.put("error", error);
    n.put("key", new String(key, StandardCharsets.UTF_8));
    n.put("record", new String(value, StandardCharsets.UTF_8));
    byte[] line;
    try {
      line = (WireJson.mapper().writeValueAsString(n) + "\n").getBytes(StandardCharsets.UTF_8);
    } catch (IOException e) {
      return false;
    }
    if (bytes + line.length > maxBytes) {
      LOG.warn("dead-letter file {} is full ({} bytes): the record is kept for retry", file, bytes);
      return false;
    }
    try (FileChannel ch =
        FileChannel.open(
            file,
            java.util.Set.of(
                StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND),
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")))) {
      ByteBuffer b = ByteBuffer.wrap(line);
      while (b.hasRemaining()) {
        ch.write(b);
      }
      ch.force(false);
    } catch (IOException e) {
      LOG.warn("cannot write the dead-letter file {}: {}", file, e.toString());
      return false;
    }
    bytes += line.length;
    byReason.computeIfAbsent(reason, r -> new AtomicLong()).incrementAndGet();
    LOG.warn("record rejected by the broker ({}: {}), kept in {}", reason, error, file);
    return true;
  }

  /** Records kept, by reason. */
  public Map<String, AtomicLong> counts() {
    return byReason;
  }

  public Path file() {
    return file;
  }
}
