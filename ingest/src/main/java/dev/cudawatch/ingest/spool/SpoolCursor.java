package dev.cudawatch.ingest.spool;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cudawatch.ingest.state.StateFile;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * Where a spool's reading resumes: everything before {@code offset} of segment {@code segment} was
 * delivered. Kept in the spool's {@code cursor} file, a versioned {@link StateFile}: {@code
 * {"format": 2, "segment": S, "offset": O}}; the {@code "S O"} line of earlier releases is read and
 * rewritten as format 2 by the next commit. Its readers (the spool, the agent adopting a run's
 * spool) read the whole spool again when the cursor is corrupt or of a newer release: spooled
 * records keep their ids, so repeats are dropped downstream, and nothing is skipped.
 */
public record SpoolCursor(long segment, long offset) {
  /** The format written: 2 = {@code {"format": 2, "segment": S, "offset": O}}. */
  public static final int FORMAT = 2;

  public static final StateFile.Codec<SpoolCursor> CODEC =
      new StateFile.Codec<>() {
        @Override
        public int format() {
          return FORMAT;
        }

        @Override
        public SpoolCursor fromJson(int format, JsonNode json) throws IOException {
          return checked(number(json, "segment"), number(json, "offset"));
        }

        @Override
        public SpoolCursor fromUnversioned(byte[] bytes) throws IOException {
          // releases up to 5be5e18: "SEGMENT OFFSET\n"
          String[] parts = new String(bytes, StandardCharsets.US_ASCII).strip().split(" ");
          try {
            if (parts.length != 2) {
              throw new IOException("not \"SEGMENT OFFSET\"");
            }
            return checked(Long.parseLong(parts[0]), Long.parseLong(parts[1]));
          } catch (NumberFormatException e) {
            throw new IOException("not \"SEGMENT OFFSET\": " + e.getMessage(), e);
          }
        }

        @Override
        public void toJson(SpoolCursor c, ObjectNode into) {
          into.put("segment", c.segment());
          into.put("offset", c.offset());
        }
      };

  /** The cursor in a cursor file's bytes ({@code where} names the file in errors). */
  public static SpoolCursor decode(byte[] bytes, String where) throws IOException {
    return StateFile.decode(bytes, CODEC, where);
  }

  private static long number(JsonNode json, String field) throws IOException {
    JsonNode n = json.get(field);
    if (n == null || !n.isIntegralNumber() || !n.canConvertToLong()) {
      throw new IOException("no " + field);
    }
    return n.asLong();
  }

  private static SpoolCursor checked(long segment, long offset) throws IOException {
    if (segment < 0 || offset < 0) {
      throw new IOException("a negative segment or offset");
    }
    return new SpoolCursor(segment, offset);
  }
}
