package dev.cudawatch.ingest.streams;

import dev.cudawatch.common.io.AtomicFiles;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The last kmsg record the agent spooled, per boot: {@code /dev/kmsg} hands out the whole ring
 * buffer on every open, so a restarted agent skips what it already took of this boot. A record of
 * another boot id says nothing about this one (sequence numbers start again at 0).
 */
final class KmsgCursor {
  private static final Logger LOG = LoggerFactory.getLogger(KmsgCursor.class);

  private final Path file;

  KmsgCursor(Path dir) throws IOException {
    AtomicFiles.createPrivateDirectories(dir);
    this.file = dir.resolve("kmsg-cursor");
  }

  /** The last sequence number taken in boot {@code bootId}, or -1 (nothing of this boot yet). */
  long lastSeq(String bootId) {
    if (!Files.exists(file)) {
      return -1;
    }
    try {
      String[] parts = Files.readString(file, StandardCharsets.US_ASCII).strip().split(" ");
      if (parts.length == 2 && parts[0].equals(bootId)) {
        return Long.parseLong(parts[1]);
      }
      return -1;
    } catch (IOException | NumberFormatException e) {
      // a cursor we cannot read: read the ring buffer again (ids repeat, the processor drops them)
      LOG.warn("kernel log cursor {} unreadable ({}); reading this boot's records again", file, e);
      return -1;
    }
  }

  void save(String bootId, long seq) throws IOException {
    AtomicFiles.write(file, (bootId + " " + seq + "\n").getBytes(StandardCharsets.US_ASCII));
  }
}
