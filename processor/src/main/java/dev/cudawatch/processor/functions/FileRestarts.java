package dev.cudawatch.processor.functions;

import dev.cudawatch.common.wire.LogRecord;
import java.nio.charset.StandardCharsets;

/**
 * Where a record falls in its stream's offsets: the next line, a line of the file read before a
 * rotation, the first line of a new file under the same name, or a re-send.
 *
 * <p>Only shippers' file offsets start over: records without a source id (Fluent Bit, Vector and
 * rsyslog send none) and records whose id is the shipper's file identity ({@link #IDENTIFIED}:
 * Filebeat's fingerprint or device and inode, which copytruncate keeps). The agent's own offsets
 * never start over under one source id, and Kafka offsets (shippers without file offsets) only
 * grow.
 *
 * <p>A file started over (rotated by copytruncate, or renamed and created again) when a record not
 * past any cursor is a file's first record (offset 0; or, where the shipper reports where the
 * record ends, as Fluent Bit's multiline path does, no more than the record itself plus a container
 * runtime's framing), or lies more than {@link #LARGE_DROP} below the current cursor (the new
 * file's first records were lost or filtered). Shippers re-send what was in flight, a small tail of
 * a file, so neither is a re-send; the price is that a re-send of a file's first record is read
 * again. The file read before the rotation keeps its own cursor: its last lines often arrive after
 * the new file's first (Fluent Bit's rotate_wait, harvesters of a renamed file), and each record
 * continues the file whose cursor lies closest below it. That cursor is dropped once the new file
 * passes it.
 */
public final class FileRestarts {
  /** The prefix of a source id that is a shipper's file identity. */
  public static final String IDENTIFIED = "file:";

  /** Bytes a container runtime may add to each line (CRI's time, stream and tag; Docker's JSON). */
  static final int FRAMING_PER_LINE = 128;

  /** A drop this large is a new file even when its first records never came (kubelet: 10 MiB). */
  static final long LARGE_DROP = 1 << 20;

  /** What a record is to its stream. */
  public enum Verdict {
    /** past the current file's cursor */
    NEXT,
    /** continues the file read before the last rotation */
    PREVIOUS_FILE,
    /** the first record of a new file under the same name */
    RESTART,
    /** a re-send */
    DUPLICATE
  }

  private FileRestarts() {}

  /**
   * The verdict on {@code r} for a stream at {@code current}, and {@code previous}, the rotated
   * file's cursor (null when there is none). {@code zeroBased}: the stream has had a record at
   * offset 0, so its shipper reports where records start and only offset 0 begins a file.
   */
  public static Verdict judge(LogRecord r, long current, Long previous, boolean zeroBased) {
    long o = r.offset();
    if (previous != null && o > previous && (o <= current || previous > current)) {
      return Verdict.PREVIOUS_FILE; // the closest cursor below it is the rotated file's
    }
    if (o > current) {
      return Verdict.NEXT;
    }
    boolean first = o == 0 || (!zeroBased && o <= firstRecordBytes(r));
    if (o < current && shippedFile(r) && (first || current - o > LARGE_DROP)) {
      return Verdict.RESTART;
    }
    return Verdict.DUPLICATE;
  }

  static boolean shippedFile(LogRecord r) {
    return r.sourceId() == null || r.sourceId().startsWith(IDENTIFIED);
  }

  /** At most what this record takes up in a file, were it the file's first. */
  static long firstRecordBytes(LogRecord r) {
    String t = r.text();
    long lines = 1;
    for (int i = 0; i < t.length(); i++) {
      if (t.charAt(i) == '\n') {
        lines++;
      }
    }
    return t.getBytes(StandardCharsets.UTF_8).length + lines * FRAMING_PER_LINE;
  }
}
