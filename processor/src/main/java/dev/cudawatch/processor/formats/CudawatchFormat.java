package dev.cudawatch.processor.formats;

import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.module.SimpleModule;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.WireFormatException;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.processor.records.RawRecord;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;

/** The cudawatch agent's own versioned records. */
public final class CudawatchFormat implements RecordFormat {
  private static final long serialVersionUID = 1L;

  /**
   * The agent writes the version first ({@code {"v":1,...}}), so a record that starts so is read in
   * one streaming pass. {@link WireJson#readLogRecord} reads a tree, checks the version in it, then
   * binds the tree: twice the work, half the parse stage's time (bench/results/profile-job.md).
   */
  private static final byte[] CURRENT =
      ("{\"v\":" + WireJson.VERSION + ",").getBytes(StandardCharsets.US_ASCII);

  /** The wire mapper, with the agent's instants read without DateTimeFormatter. */
  private static final ObjectReader READER =
      WireJson.mapper()
          .copy()
          .registerModule(
              new SimpleModule("fast-instants")
                  .addDeserializer(Instant.class, new IsoInstantDeserializer()))
          .readerFor(LogRecord.class);

  @Override
  public List<LogRecord> parse(RawRecord raw) throws WireFormatException {
    return List.of(read(raw.value));
  }

  /**
   * One record: the fast path for the current version as the agent writes it; anything else, or
   * anything the fast path cannot read, through {@link WireJson#readLogRecord}, whose reasons the
   * dead letters keep.
   */
  public static LogRecord read(byte[] bytes) throws WireFormatException {
    // A second "v" (the tree read keeps the last one) takes the slow path; so does a key or value
    // that merely ends in "v" before a colon: rare, and only slower.
    if (startsWith(bytes, CURRENT) && !hasVersionKey(bytes, CURRENT.length)) {
      try {
        LogRecord r = READER.readValue(bytes);
        if (r != null && r.v() == WireJson.VERSION) {
          return r;
        }
      } catch (IOException | RuntimeException e) {
        // the general path reads it again and says why it cannot
      }
    }
    return WireJson.readLogRecord(bytes);
  }

  /** Whether {@code "v":} occurs past {@code from}; looks for the rarer ':' first. */
  private static boolean hasVersionKey(byte[] b, int from) {
    for (int i = from + 3; i < b.length; i++) {
      if (b[i] == ':' && b[i - 1] == '"' && b[i - 2] == 'v' && b[i - 3] == '"') {
        return true;
      }
    }
    return false;
  }

  private static boolean startsWith(byte[] b, byte[] prefix) {
    if (b == null || b.length < prefix.length) {
      return false;
    }
    for (int i = 0; i < prefix.length; i++) {
      if (b[i] != prefix[i]) {
        return false;
      }
    }
    return true;
  }
}
