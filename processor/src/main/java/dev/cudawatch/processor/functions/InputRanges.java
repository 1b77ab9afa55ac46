package dev.cudawatch.processor.functions;

import dev.cudawatch.common.gpu.MemorySample;
import dev.cudawatch.common.gpu.NvidiaSmiCsv;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.common.wire.WireFormatException;
import java.time.Instant;
import java.util.Optional;

/**
 * The range of every time and number a record brings from outside, checked once for all formats
 * after parsing. Per field, out of range means:
 *
 * <ul>
 *   <li>event and ingest time before 1970 or after 9999: dead-lettered. Downstream code turns times
 *       into epoch milliseconds (watermarks, windows), which overflows past year 292278994, and a
 *       time that far out is no clock error to correct (clock skew within reason is clamped where
 *       event time is assigned).
 *   <li>offset negative: dead-lettered (offsets order and de-duplicate a stream).
 *   <li>rank and local rank outside 0..{@value #MAX_RANK}, GPU index outside 0..{@value #MAX_GPU}:
 *       dead-lettered; these name who is blamed, so an impossible one is not guessed at.
 *   <li>text longer than {@value #MAX_TEXT_CHARS} characters: cut to it and counted, like the
 *       agent's own {@code max_line_bytes} (an incident quoting the whole line must still fit in a
 *       Kafka record).
 *   <li>a GPU memory sample's bytes negative, total over 1 PiB or used over total, its GPU or time
 *       out of range: dead-lettered (trends divide by them).
 * </ul>
 */
final class InputRanges {
  private InputRanges() {}

  static final Instant MIN_TIME = Instant.EPOCH;
  static final Instant MAX_TIME = Instant.parse("9999-12-31T23:59:59.999999999Z");
  static final int MAX_RANK = 1 << 20;
  static final int MAX_GPU = 1024;
  static final int MAX_TEXT_CHARS = 64 * 1024;
  static final long MAX_GPU_BYTES = 1L << 50;

  /** The record if all its values are in range, cut to length; the reason it is not otherwise. */
  static LogRecord check(LogRecord r, Runnable truncated) throws WireFormatException {
    time("event time", r.eventTime());
    time("ingest time", r.ingestTime());
    if (r.offset() < 0) {
      throw new WireFormatException("offset out of range: " + r.offset());
    }
    index("rank", r.rank(), MAX_RANK);
    index("local rank", r.localRank(), MAX_RANK);
    index("gpu", r.gpu(), MAX_GPU);
    if (r.kind() == RecordKind.GPU_MEMORY) {
      sample(r.text());
    }
    if (r.text().length() > MAX_TEXT_CHARS) {
      truncated.run();
      return cut(r);
    }
    return r;
  }

  private static void time(String what, Instant t) throws WireFormatException {
    if (t != null && (t.isBefore(MIN_TIME) || t.isAfter(MAX_TIME))) {
      throw new WireFormatException(what + " out of range: " + t);
    }
  }

  private static void index(String what, Integer v, int max) throws WireFormatException {
    if (v != null && (v < 0 || v >= max)) {
      throw new WireFormatException(what + " out of range: " + v);
    }
  }

  private static void sample(String text) throws WireFormatException {
    Optional<MemorySample> s;
    try {
      s = NvidiaSmiCsv.agentFormat().parse(text);
    } catch (RuntimeException e) { // e.g. a time whose epoch milliseconds overflow
      throw new WireFormatException("gpu memory sample unreadable: " + e.getMessage());
    }
    if (s.isEmpty()) {
      return; // not a sample row: the trend operator skips it, as before
    }
    MemorySample m = s.get();
    if (m.usedBytes() < 0
        || m.totalBytes() <= 0
        || m.totalBytes() > MAX_GPU_BYTES
        || m.usedBytes() > m.totalBytes()
        || m.gpu() < 0
        || m.gpu() >= MAX_GPU
        || m.epochMillis() < 0
        || m.epochMillis() > MAX_TIME.toEpochMilli()) {
      throw new WireFormatException("gpu memory sample out of range: " + m);
    }
  }

  private static LogRecord cut(LogRecord r) {
    return new LogRecord(
        r.v(),
        r.id(),
        r.host(),
        r.job(),
        r.rank(),
        r.localRank(),
        r.gpu(),
        r.kind(),
        r.stream(),
        r.source(),
        r.sourceId(),
        r.offset(),
        r.eventTime(),
        r.ingestTime(),
        r.text().substring(0, MAX_TEXT_CHARS),
        r.lineCount(),
        r.raw() == null || r.raw().length() <= MAX_TEXT_CHARS
            ? r.raw()
            : r.raw().substring(0, MAX_TEXT_CHARS),
        r.gpuUuid(),
        r.attribution());
  }
}
