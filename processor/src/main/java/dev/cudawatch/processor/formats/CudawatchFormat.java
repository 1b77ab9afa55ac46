package dev.cudawatch.processor.formats;

import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.WireFormatException;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.processor.records.RawRecord;
import java.nio.charset.StandardCharsets;
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
    // A second "v" (the tree read keeps the last one) is a repeated field: the fast reader leaves
    // it, like anything else it cannot vouch for, to the general path.
    if (startsWith(bytes, CURRENT)) {
      LogRecord r = LogRecordReader.read(bytes);
      if (r != null) {
        return r;
      }
    }
    return WireJson.readLogRecord(bytes);
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
