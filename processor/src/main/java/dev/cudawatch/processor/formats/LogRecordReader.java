package dev.cudawatch.processor.formats;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.io.SerializedString;
import dev.cudawatch.common.wire.IsoInstant;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.common.wire.WireJson;
import java.io.IOException;
import java.time.Instant;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Reads a {@link LogRecord} as the agent writes it, field by field over one streaming parser into
 * locals and then the record's constructor: Jackson's property-based creator (a buffer per record,
 * a lookup per property) was half of the parse stage (bench/results/profile-job.md). It takes only
 * what it reads exactly as the mapper would bind it (each field once, of the type the agent writes,
 * instants in {@link IsoInstant}'s form, nothing after the object) and returns null for anything
 * else, which the caller reads again through {@link WireJson#readLogRecord} for its reason.
 */
final class LogRecordReader {
  private static final JsonFactory JSON = WireJson.mapper().getFactory();

  /** The fields in the order the agent writes them ({@code LogRecordJson}). */
  private static final SerializedString[] NAMES =
      Stream.of(
              "v",
              "id",
              "host",
              "job",
              "rank",
              "local_rank",
              "gpu",
              "kind",
              "stream",
              "source",
              "source_id",
              "offset",
              "event_time",
              "ingest_time",
              "text",
              "line_count",
              "raw",
              "gpu_uuid",
              "attribution")
          .map(SerializedString::new)
          .toArray(SerializedString[]::new);

  // bits of the fields seen (1 << index), to leave a repeated or missing one to the general reader
  private static final int V = 1;
  private static final int OFFSET = 1 << 11;
  private static final int LINE_COUNT = 1 << 15;

  private LogRecordReader() {}

  /** The record, or null when this reader cannot vouch for binding it as the mapper does. */
  static LogRecord read(byte[] bytes) {
    try (JsonParser p = JSON.createParser(bytes)) {
      return read(p);
    } catch (IOException | RuntimeException e) {
      return null; // the general reader reads it again and says why it cannot
    }
  }

  private static LogRecord read(JsonParser p) throws IOException {
    if (p.nextToken() != JsonToken.START_OBJECT) {
      return null;
    }
    int seen = 0;
    int v = 0;
    String id = null;
    String host = null;
    String job = null;
    Integer rank = null;
    Integer localRank = null;
    Integer gpu = null;
    RecordKind kind = null;
    String stream = null;
    String source = null;
    String sourceId = null;
    long offset = 0;
    Instant eventTime = null;
    Instant ingestTime = null;
    String text = null;
    int lineCount = 0;
    String raw = null;
    String gpuUuid = null;
    Map<String, String> attribution = null;
    int next = 0; // the field the agent writes next, when it writes all of them
    while (true) {
      int f;
      if (next < NAMES.length && p.nextFieldName(NAMES[next])) {
        f = next; // the name's bytes compared in place: no symbol table lookup
      } else {
        JsonToken t = next < NAMES.length ? p.currentToken() : p.nextToken();
        if (t == JsonToken.END_OBJECT) {
          break;
        }
        f = t == JsonToken.FIELD_NAME ? index(p.currentName()) : -1;
      }
      next = f + 1;
      JsonToken t = p.nextToken();
      switch (f) {
        case 0 -> { // v
          v = intValue(p, t);
        }
        case 1 -> { // id
          id = string(p, t);
        }
        case 2 -> { // host
          host = string(p, t);
        }
        case 3 -> { // job
          job = string(p, t);
        }
        case 4 -> { // rank
          rank = intValue(p, t);
        }
        case 5 -> { // local_rank
          localRank = intValue(p, t);
        }
        case 6 -> { // gpu
          gpu = intValue(p, t);
        }
        case 7 -> { // kind
          kind = kind(string(p, t));
        }
        case 8 -> { // stream
          stream = string(p, t);
        }
        case 9 -> { // source
          source = string(p, t);
        }
        case 10 -> { // source_id
          sourceId = string(p, t);
        }
        case 11 -> { // offset
          if (t != JsonToken.VALUE_NUMBER_INT
              || p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
            return null;
          }
          offset = p.getLongValue();
        }
        case 12 -> { // event_time
          eventTime = instant(string(p, t));
        }
        case 13 -> { // ingest_time
          ingestTime = instant(string(p, t));
        }
        case 14 -> { // text
          text = string(p, t);
        }
        case 15 -> { // line_count
          lineCount = intValue(p, t);
        }
        case 16 -> { // raw
          raw = string(p, t);
        }
        case 17 -> { // gpu_uuid
          gpuUuid = string(p, t);
        }
        case 18 -> { // attribution
          attribution = attribution(p, t);
        }
        default -> {
          return null; // unknown (-1): the mapper refuses it
        }
      }
      if ((seen & (1 << f)) != 0) {
        return null;
      }
      seen |= 1 << f;
    }
    // the object ended (a truncated one throws); the mapper's defaults for absent primitives and
    // anything after the object are the general reader's business
    if (p.currentToken() != JsonToken.END_OBJECT
        || (seen & (V | OFFSET | LINE_COUNT)) != (V | OFFSET | LINE_COUNT)
        || p.nextToken() != null
        || v != WireJson.VERSION) {
      return null;
    }
    return new LogRecord(
        v,
        id,
        host,
        job,
        rank,
        localRank,
        gpu,
        kind,
        stream,
        source,
        sourceId,
        offset,
        eventTime,
        ingestTime,
        text,
        lineCount,
        raw,
        gpuUuid,
        attribution);
  }

  private static int index(String name) {
    for (int i = 0; i < NAMES.length; i++) {
      if (NAMES[i].getValue().equals(name)) {
        return i;
      }
    }
    return -1;
  }

  /** A string value; any other token (null included) is left to the general reader. */
  private static String string(JsonParser p, JsonToken t) throws IOException {
    if (t != JsonToken.VALUE_STRING) {
      throw Unreadable.INSTANCE;
    }
    return p.getText();
  }

  /** The agent's form of an instant; any other form is left to the general reader. */
  private static Instant instant(String s) {
    Instant t = IsoInstant.parse(s);
    if (t == null) {
      throw Unreadable.INSTANCE;
    }
    return t;
  }

  private static int intValue(JsonParser p, JsonToken t) throws IOException {
    if (t != JsonToken.VALUE_NUMBER_INT || p.getNumberType() != JsonParser.NumberType.INT) {
      throw Unreadable.INSTANCE;
    }
    return p.getIntValue();
  }

  private static RecordKind kind(String s) {
    return switch (s) {
      case "LOG" -> RecordKind.LOG;
      case "KERNEL" -> RecordKind.KERNEL;
      case "GPU_MEMORY" -> RecordKind.GPU_MEMORY;
      case "EXIT" -> RecordKind.EXIT;
      case "QUIET" -> RecordKind.QUIET;
      default -> throw Unreadable.INSTANCE;
    };
  }

  /**
   * A flat object of strings, each key once, built immutable at once (the record would copy a
   * mutable one); a repeated key throws, so the general reader takes the record.
   */
  private static Map<String, String> attribution(JsonParser p, JsonToken t) throws IOException {
    if (t != JsonToken.START_OBJECT) {
      throw Unreadable.INSTANCE;
    }
    String[] kv = new String[16];
    int n = 0;
    for (String k = p.nextFieldName(); k != null; k = p.nextFieldName()) {
      if (n == kv.length) {
        kv = Arrays.copyOf(kv, n * 2);
      }
      kv[n++] = k;
      kv[n++] = string(p, p.nextToken());
    }
    if (p.currentToken() != JsonToken.END_OBJECT) {
      throw Unreadable.INSTANCE;
    }
    return switch (n / 2) {
      case 0 -> null;
      case 1 -> Map.of(kv[0], kv[1]);
      case 2 -> Map.of(kv[0], kv[1], kv[2], kv[3]);
      case 3 -> Map.of(kv[0], kv[1], kv[2], kv[3], kv[4], kv[5]);
      case 4 -> Map.of(kv[0], kv[1], kv[2], kv[3], kv[4], kv[5], kv[6], kv[7]);
      default -> {
        Map<String, String> m = new HashMap<>();
        for (int i = 0; i < n; i += 2) {
          if (m.put(kv[i], kv[i + 1]) != null) {
            throw Unreadable.INSTANCE;
          }
        }
        yield m;
      }
    };
  }

  /** This reader's "not mine": no stack trace, since it only sends the record to the other. */
  private static final class Unreadable extends RuntimeException {
    private static final long serialVersionUID = 1L;
    static final Unreadable INSTANCE = new Unreadable();

    private Unreadable() {
      super("left to the general reader", null, false, false);
    }
  }
}
