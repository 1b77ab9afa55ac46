package dev.cudawatch.ingest.streams;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cudawatch.common.io.AtomicFiles;
import dev.cudawatch.ingest.state.StateFile;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The last kmsg record the agent spooled, per boot: {@code /dev/kmsg} hands out the whole ring
 * buffer on every open, so a restarted agent skips what it already took of this boot. A record of
 * another boot id says nothing about this one (sequence numbers start again at 0).
 *
 * <p>A versioned {@link StateFile}: {@code {"format": 2, "boot_id": ID, "seq": N}}; the {@code "ID
 * N"} line of earlier releases is read and rewritten as format 2 by the next save. A cursor that is
 * corrupt or of a newer release is counted and logged, and this boot's records are read again: the
 * record ids (boot id and sequence) repeat, so the processor drops the repeats; reading on from a
 * guessed place could skip an Xid that was never spooled.
 */
final class KmsgCursor {
  /** The format written: 2 = {@code {"format": 2, "boot_id": ID, "seq": N}}. */
  static final int FORMAT = 2;

  private static final Logger LOG = LoggerFactory.getLogger(KmsgCursor.class);

  private final StateFile<Position> file;
  private final AtomicLong resets = new AtomicLong();

  /** What the cursor holds: the last sequence number taken in a boot. */
  record Position(String bootId, long seq) {}

  KmsgCursor(Path dir) throws IOException {
    AtomicFiles.createPrivateDirectories(dir);
    this.file = new StateFile<>(dir.resolve("kmsg-cursor"), CODEC);
  }

  /** The last sequence number taken in boot {@code bootId}, or -1 (nothing of this boot yet). */
  long lastSeq(String bootId) {
    try {
      Position p = file.read();
      return p != null && p.bootId().equals(bootId) ? p.seq() : -1;
    } catch (IOException e) {
      resets.incrementAndGet();
      LOG.warn(
          "kernel log cursor unusable ({}); reading this boot's records again", e.getMessage());
      return -1;
    }
  }

  void save(String bootId, long seq) throws IOException {
    file.write(new Position(bootId, seq));
  }

  /** Times an unreadable (corrupt, newer) cursor made this boot's records be read again. */
  long resets() {
    return resets.get();
  }

  static final StateFile.Codec<Position> CODEC =
      new StateFile.Codec<>() {
        @Override
        public int format() {
          return FORMAT;
        }

        @Override
        public Position fromJson(int format, JsonNode json) throws IOException {
          JsonNode boot = json.get("boot_id");
          JsonNode seq = json.get("seq");
          if (boot == null
              || !boot.isTextual()
              || seq == null
              || !seq.isIntegralNumber()
              || !seq.canConvertToLong()) {
            throw new IOException("no boot_id and seq");
          }
          return new Position(boot.asText(), seq.asLong());
        }

        @Override
        public Position fromUnversioned(byte[] bytes) throws IOException {
          // release 5be5e18: "BOOT-ID SEQ\n"
          String[] parts = new String(bytes, StandardCharsets.US_ASCII).strip().split(" ");
          try {
            if (parts.length != 2) {
              throw new IOException("not \"BOOT-ID SEQ\"");
            }
            return new Position(parts[0], Long.parseLong(parts[1]));
          } catch (NumberFormatException e) {
            throw new IOException("not \"BOOT-ID SEQ\": " + e.getMessage(), e);
          }
        }

        @Override
        public void toJson(Position p, ObjectNode into) {
          into.put("boot_id", p.bootId());
          into.put("seq", p.seq());
        }
      };
}
