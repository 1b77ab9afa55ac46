package dev.cudawatch.common.wire;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * The one JSON mapping of every wire record. Each record carries {@code "v"}; a reader rejects a
 * missing, unknown or newer version with a reason rather than half-reading it.
 */
public final class WireJson {
  /** The wire version this build writes and the newest it reads. */
  public static final int VERSION = 1;

  private static final ObjectMapper MAPPER =
      JsonMapper.builder()
          .addModule(new JavaTimeModule())
          .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
          .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
          .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
          .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
          .defaultPropertyInclusion(
              com.fasterxml.jackson.annotation.JsonInclude.Value.construct(
                  com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL,
                  com.fasterxml.jackson.annotation.JsonInclude.Include.USE_DEFAULTS))
          .build();

  private static final java.util.concurrent.atomic.AtomicBoolean WARM =
      new java.util.concurrent.atomic.AtomicBoolean();

  private WireJson() {}

  /**
   * Writes and reads back one sample of each record a process ships or reads (a log record, an
   * incident, an alert), results thrown away, so Jackson introspects their types at start-up:
   * measured, the first log record otherwise waits ~0.2 s to be written. Once per JVM.
   */
  public static void warmUp() {
    if (!WARM.compareAndSet(false, true)) {
      return;
    }
    java.time.Instant t = java.time.Instant.EPOCH;
    LogRecord r =
        LogRecord.builder()
            .host("warmup")
            .kind(RecordKind.LOG)
            .source("warmup")
            .eventTime(t)
            .text("warmup")
            .attribution(java.util.Map.of("tried", "warmup"))
            .build();
    Incident i =
        Incident.builder("warmup", "cuda_oom")
            .host("warmup")
            .eventTime(t)
            .fields(java.util.Map.of("gpu", 0, "requested_bytes", 1L))
            .build();
    Alert a =
        new Alert(
            VERSION,
            "warmup",
            Alert.State.FIRING,
            java.util.Map.of("alertname", "Warmup"),
            null,
            t,
            null);
    try {
      readLogRecord(toBytes(r));
      readIncident(toBytes(i));
      readAlert(toBytes(a));
      toJson(i);
    } catch (WireFormatException e) {
      throw new IllegalStateException("the wire format cannot read its own records", e);
    }
  }

  /** {@link #warmUp} on a daemon thread, for a process that should not wait for it. */
  public static void warmUpInBackground() {
    Thread t = new Thread(WireJson::warmUp, "wire-json-warmup");
    t.setDaemon(true);
    t.start();
  }

  /** The shared mapper, for code that needs a tree or a writer; do not reconfigure it. */
  public static ObjectMapper mapper() {
    return MAPPER;
  }

  private static final ThreadLocal<LogRecordJson> LOG_RECORDS =
      ThreadLocal.withInitial(LogRecordJson::new);

  /**
   * A log record's JSON, the same bytes as {@link #toBytes(Object)}, written by a streaming encoder
   * kept per thread: the agent writes one per line.
   */
  public static byte[] toBytes(LogRecord record) {
    return LOG_RECORDS.get().encode(record);
  }

  public static byte[] toBytes(Object record) {
    try {
      return MAPPER.writeValueAsBytes(record);
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static String toJson(Object record) {
    try {
      return MAPPER.writeValueAsString(record);
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static LogRecord readLogRecord(byte[] bytes) throws WireFormatException {
    return read(bytes, LogRecord.class);
  }

  public static Incident readIncident(byte[] bytes) throws WireFormatException {
    return read(bytes, Incident.class);
  }

  public static Alert readAlert(byte[] bytes) throws WireFormatException {
    return read(bytes, Alert.class);
  }

  /** Reads one record of {@code type}, checking its version first. */
  public static <T> T read(byte[] bytes, Class<T> type) throws WireFormatException {
    if (bytes == null || bytes.length == 0) {
      throw new WireFormatException("empty record");
    }
    JsonNode tree;
    try {
      tree = MAPPER.readTree(bytes);
    } catch (IOException e) {
      throw new WireFormatException("not JSON: " + firstLine(e.getMessage()), e);
    }
    if (tree == null || !tree.isObject()) {
      throw new WireFormatException("not a JSON object");
    }
    JsonNode v = tree.get("v");
    if (v == null || !v.isInt()) {
      throw new WireFormatException("missing or non-integer version field \"v\"");
    }
    if (v.intValue() < 1 || v.intValue() > VERSION) {
      throw new WireFormatException(
          "unsupported "
              + type.getSimpleName()
              + " version "
              + v.intValue()
              + " (this build reads 1.."
              + VERSION
              + ")");
    }
    try {
      return MAPPER.treeToValue(tree, type);
    } catch (IOException | IllegalArgumentException e) {
      throw new WireFormatException(
          "invalid " + type.getSimpleName() + ": " + firstLine(e.getMessage()), e);
    }
  }

  private static String firstLine(String s) {
    if (s == null) {
      return "";
    }
    int nl = s.indexOf('\n');
    return nl < 0 ? s : s.substring(0, nl);
  }
}
