package dev.cudawatch.processor.formats;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.common.wire.WireFormatException;
import dev.cudawatch.processor.records.RawRecord;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.logs.v1.LogsData;
import io.opentelemetry.proto.logs.v1.ResourceLogs;
import io.opentelemetry.proto.logs.v1.ScopeLogs;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The OpenTelemetry Collector's Kafka exporter, logs encoded {@code otlp_proto} (read with the
 * published OTLP classes) or {@code otlp_json}: a batch of log records under resources whose
 * attributes name the node ({@code host.name}, {@code k8s.node.name}) and pod ({@code
 * k8s.pod.name}, {@code k8s.namespace.name}, {@code k8s.container.name}, {@code k8s.job.name},
 * labels as {@code k8s.pod.labels.NAME}); each record's {@code log.file.path} and {@code
 * log.iostream} attributes name its stream. A batch is read whole or dead-lettered whole.
 */
public final class OtlpFormat implements RecordFormat {
  private static final long serialVersionUID = 1L;

  /** Records one batch may hold: their index shares the Kafka offset's low 20 bits. */
  static final int MAX_BATCH = 1 << 20;

  private static final String LABEL_PREFIX = "k8s.pod.labels.";
  private final Attribution attribution;

  public OtlpFormat(Attribution attribution) {
    this.attribution = attribution;
  }

  /** One log record with its resource's and its own attributes, from either encoding. */
  private record Entry(
      Map<String, String> resource, Map<String, String> attributes, long nanos, String body) {}

  @Override
  public List<LogRecord> parse(RawRecord raw) throws WireFormatException {
    if (raw.value == null || raw.value.length == 0) {
      throw new WireFormatException("empty otlp record");
    }
    List<Entry> entries = firstNonSpace(raw.value) == '{' ? fromJson(raw.value) : fromProto(raw);
    if (entries.isEmpty()) {
      throw new WireFormatException("otlp record without log records");
    }
    if (entries.size() >= MAX_BATCH) {
      throw new WireFormatException("otlp batch of " + entries.size() + " records is too large");
    }
    List<LogRecord> out = new ArrayList<>(entries.size());
    for (int i = 0; i < entries.size(); i++) {
      out.add(record(entries.get(i), raw, i));
    }
    return out;
  }

  private LogRecord record(Entry e, RawRecord raw, int index) throws WireFormatException {
    Map<String, String> res = e.resource();
    Shipped s = new Shipped();
    s.host = FluentBitFormat.first(res.get("host.name"), res.get("k8s.node.name"));
    String file = e.attributes().get("log.file.path");
    String pod = res.get("k8s.pod.name");
    s.source =
        FluentBitFormat.first(
            file,
            pod == null
                ? null
                : res.get("k8s.namespace.name") + "/" + pod + "/" + res.get("k8s.container.name"),
            e.attributes().get("log.file.name"),
            res.get("service.name"));
    s.stream = e.attributes().get("log.iostream");
    s.kind = attribution.kernelFile(file) ? RecordKind.KERNEL : RecordKind.LOG;
    s.text = e.body();
    s.time = e.nanos() > 0 ? Instant.ofEpochSecond(0, e.nanos()) : null;
    Map<String, String> labels = new HashMap<>();
    res.forEach(
        (k, v) -> {
          if (k.startsWith(LABEL_PREFIX)) {
            labels.put(k.substring(LABEL_PREFIX.length()), v);
          }
        });
    if (res.get("k8s.job.name") != null) {
      labels.putIfAbsent("job-name", res.get("k8s.job.name"));
    }
    s.job = attribution.job(file, labels);
    s.rank = attribution.rank(file, labels);
    return s.build(OTLP, raw, index);
  }

  private static List<Entry> fromProto(RawRecord raw) throws WireFormatException {
    LogsData data;
    try {
      data = LogsData.parseFrom(raw.value);
    } catch (InvalidProtocolBufferException e) {
      throw new WireFormatException("neither otlp_json nor otlp_proto: " + e.getMessage(), e);
    }
    List<Entry> out = new ArrayList<>();
    for (ResourceLogs rl : data.getResourceLogsList()) {
      Map<String, String> res = attributes(rl.getResource().getAttributesList());
      for (ScopeLogs sl : rl.getScopeLogsList()) {
        for (io.opentelemetry.proto.logs.v1.LogRecord r : sl.getLogRecordsList()) {
          if (r.getBody().getValueCase() != AnyValue.ValueCase.STRING_VALUE) {
            throw new WireFormatException(
                "otlp log record whose body is not a string: " + r.getBody().getValueCase());
          }
          long t = r.getTimeUnixNano() != 0 ? r.getTimeUnixNano() : r.getObservedTimeUnixNano();
          out.add(
              new Entry(res, attributes(r.getAttributesList()), t, r.getBody().getStringValue()));
        }
      }
    }
    return out;
  }

  private static Map<String, String> attributes(List<KeyValue> kvs) {
    Map<String, String> out = new HashMap<>();
    for (KeyValue kv : kvs) {
      AnyValue v = kv.getValue();
      switch (v.getValueCase()) {
        case STRING_VALUE -> out.put(kv.getKey(), v.getStringValue());
        case INT_VALUE -> out.put(kv.getKey(), Long.toString(v.getIntValue()));
        case BOOL_VALUE -> out.put(kv.getKey(), Boolean.toString(v.getBoolValue()));
        default -> {} // arrays, maps and bytes name nothing the job uses
      }
    }
    return out;
  }

  private static List<Entry> fromJson(byte[] bytes) throws WireFormatException {
    JsonNode root = JsonFields.object(bytes, "otlp_json");
    JsonNode rls = JsonFields.at(root, "resourceLogs");
    if (rls == null || !rls.isArray()) {
      throw new WireFormatException("otlp_json record without \"resourceLogs\"");
    }
    List<Entry> out = new ArrayList<>();
    for (JsonNode rl : rls) {
      Map<String, String> res = attributes(JsonFields.at(rl, "resource", "attributes"));
      JsonNode scopes = JsonFields.at(rl, "scopeLogs");
      if (scopes == null) {
        continue;
      }
      for (JsonNode sl : scopes) {
        JsonNode records = JsonFields.at(sl, "logRecords");
        if (records == null) {
          continue;
        }
        for (JsonNode r : records) {
          JsonNode body = JsonFields.at(r, "body", "stringValue");
          if (body == null || !body.isTextual()) {
            throw new WireFormatException("otlp_json log record whose body is not a stringValue");
          }
          long t = nanos(r, "timeUnixNano");
          out.add(
              new Entry(
                  res,
                  attributes(JsonFields.at(r, "attributes")),
                  t != 0 ? t : nanos(r, "observedTimeUnixNano"),
                  body.asText()));
        }
      }
    }
    return out;
  }

  /** OTLP/JSON writes 64-bit integers as decimal strings; numbers are accepted too. */
  private static long nanos(JsonNode r, String field) throws WireFormatException {
    String t = JsonFields.text(r, field);
    if (t == null) {
      return 0;
    }
    try {
      return Long.parseLong(t);
    } catch (NumberFormatException e) {
      throw new WireFormatException("otlp_json " + field + " is not an integer: " + t);
    }
  }

  private static Map<String, String> attributes(JsonNode kvs) {
    Map<String, String> out = new HashMap<>();
    if (kvs == null || !kvs.isArray()) {
      return out;
    }
    for (JsonNode kv : kvs) {
      JsonNode key = kv.get("key");
      JsonNode v = kv.get("value");
      if (key == null || v == null) {
        continue;
      }
      for (String type : List.of("stringValue", "intValue", "boolValue")) {
        if (v.has(type) && v.get(type).isValueNode()) {
          out.put(key.asText(), v.get(type).asText());
        }
      }
    }
    return out;
  }

  private static int firstNonSpace(byte[] b) {
    for (byte x : b) {
      if (x != ' ' && x != '\n' && x != '\r' && x != '\t') {
        return x;
      }
    }
    return -1;
  }
}
