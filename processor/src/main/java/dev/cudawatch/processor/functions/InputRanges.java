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
 *   <li>text longer than {@value #MAX_TEXT_CHARS} characters: cut to it and counted (an incident
 *       quotes its lines, and must still fit in a Kafka record of 1 MB).
 *   <li>host, job, stream, source or source id over {@value #MAX_NAME_CHARS} characters:
 *       dead-lettered (they are keys, copied into every incident).
 *   <li>text with lone surrogates (JSON {@code \\ud800} escapes): each replaced by U+FFFD, as
 *       invalid UTF-8 is when read.
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
  static final int MAX_TEXT_CHARS = 16 * 1024;
  static final int MAX_NAME_CHARS = 4096;
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
    for (String name : new String[] {r.host(), r.job(), r.stream(), r.source(), r.sourceId()}) {
      if (name != null && name.length() > MAX_NAME_CHARS) {
        throw new WireFormatException(
            "a host, job, stream or source name of " + name.length() + " characters");
      }
    }
    if (r.kind() == RecordKind.GPU_MEMORY) {
      sample(r.text());
    }
    boolean tooLong = r.text().length() > MAX_TEXT_CHARS;
    if (tooLong) {
      truncated.run();
    }
    return tooLong || !wellFormed(r) ? rebuilt(r) : r;
  }

  /**
   * Whether every text field is valid UTF-16. JSON's {@code \ud800} escapes (or CESU-8 bytes) give
   * a Java string a lone surrogate, which UTF-8 cannot carry: it would come out of the job's
   * serializers as '?', so a stream key computed before a shuffle would not match the one after it
   * (a non-deterministic key fails the task on every retry).
   */
  private static boolean wellFormed(LogRecord r) {
    if (!ok(r.id()) || !ok(r.host()) || !ok(r.job()) || !ok(r.stream()) || !ok(r.source())) {
      return false;
    }
    if (!ok(r.sourceId()) || !ok(r.text()) || !ok(r.raw()) || !ok(r.gpuUuid())) {
      return false;
    }
    if (r.attribution() != null) {
      for (var e : r.attribution().entrySet()) {
        if (!ok(e.getKey()) || !ok(e.getValue())) {
          return false;
        }
      }
    }
    return true;
  }

  private static boolean ok(String s) {
    return s == null || clean(s) == s;
  }

  /**
   * {@code s} with lone surrogates replaced by U+FFFD, as UTF-8 decoding does; {@code s} if none.
   */
  static String clean(String s) {
    if (s == null) {
      return null;
    }
    StringBuilder b = null;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      boolean lone;
      if (Character.isHighSurrogate(c)) {
        lone = i + 1 >= s.length() || !Character.isLowSurrogate(s.charAt(i + 1));
        if (!lone) {
          if (b != null) {
            b.append(c).append(s.charAt(i + 1));
          }
          i++;
          continue;
        }
      } else {
        lone = Character.isLowSurrogate(c);
      }
      if (lone && b == null) {
        b = new StringBuilder(s.length()).append(s, 0, i);
      }
      if (b != null) {
        b.append(lone ? '\uFFFD' : c);
      }
    }
    return b == null ? s : b.toString();
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

  /** The record cut to length, its text fields well-formed. */
  private static LogRecord rebuilt(LogRecord r) {
    java.util.Map<String, String> attribution = null;
    if (r.attribution() != null) {
      attribution = new java.util.LinkedHashMap<>();
      for (var e : r.attribution().entrySet()) {
        attribution.put(clean(e.getKey()), clean(e.getValue()));
      }
    }
    return new LogRecord(
        r.v(),
        clean(r.id()),
        clean(r.host()),
        clean(r.job()),
        r.rank(),
        r.localRank(),
        r.gpu(),
        r.kind(),
        clean(r.stream()),
        clean(r.source()),
        clean(r.sourceId()),
        r.offset(),
        r.eventTime(),
        r.ingestTime(),
        clean(cut(r.text())),
        r.lineCount(),
        clean(cut(r.raw())),
        clean(r.gpuUuid()),
        attribution);
  }

  private static String cut(String s) {
    return s == null || s.length() <= MAX_TEXT_CHARS ? s : s.substring(0, MAX_TEXT_CHARS);
  }
}
