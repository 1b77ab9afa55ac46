package dev.cudawatch.processor.formats;

import static dev.cudawatch.processor.formats.JsonFields.at;
import static dev.cudawatch.processor.formats.JsonFields.text;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.common.wire.WireFormatException;
import dev.cudawatch.processor.records.RawRecord;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * Fluent Bit's Kafka output ({@code format json}): the tail input's {@code log} (with {@code
 * Path_Key filename} and {@code Offset_Key offset}), the kubernetes filter's {@code kubernetes}
 * block, or the kmsg input's {@code msg}/{@code sequence}; the time under {@code timestamp_key}
 * ({@code @timestamp}, epoch seconds by default, or ISO 8601), {@code date} or {@code time}; the
 * node in {@code hostname} (record_modifier) or {@code kubernetes.host}.
 */
public final class FluentBitFormat implements RecordFormat {
  private static final long serialVersionUID = 1L;
  private final Attribution attribution;

  public FluentBitFormat(Attribution attribution) {
    this.attribution = attribution;
  }

  @Override
  public List<LogRecord> parse(RawRecord raw) throws WireFormatException {
    JsonNode r = JsonFields.object(raw.value, FLUENT_BIT);
    Shipped s = new Shipped();
    s.host = first(text(r, "hostname"), text(r, "kubernetes", "host"), text(r, "host"));
    s.time = time(r);
    String file = text(r, "filename");
    Map<String, String> labels = JsonFields.labels(r, "kubernetes", "labels");
    if (at(r, "log") != null) {
      s.text = text(r, "log");
      s.offset = JsonFields.offset(r, "offset");
      s.stream = text(r, "stream");
      String pod = text(r, "kubernetes", "pod_name");
      if (file != null) {
        s.source = file;
      } else if (pod != null) {
        s.source =
            text(r, "kubernetes", "namespace_name")
                + "/"
                + pod
                + "/"
                + text(r, "kubernetes", "container_name");
        s.sourceId = text(r, "kubernetes", "docker_id");
      }
      s.kind = attribution.kernelFile(file) ? RecordKind.KERNEL : RecordKind.LOG;
    } else if (at(r, "msg") != null && at(r, "sequence") != null) {
      s.text = text(r, "msg"); // the kmsg input
      s.offset = JsonFields.offset(r, "sequence");
      s.source = "/dev/kmsg";
      s.kind = RecordKind.KERNEL;
    } else {
      throw new WireFormatException(
          "fluent-bit record with neither \"log\" (tail) nor \"msg\" and \"sequence\" (kmsg)");
    }
    s.job = attribution.job(file, labels);
    s.rank = attribution.rank(file, labels);
    return List.of(s.build(FLUENT_BIT, raw, 0));
  }

  private static Instant time(JsonNode r) throws WireFormatException {
    Instant t = JsonFields.time(r, "@timestamp");
    if (t == null) {
      t = JsonFields.time(r, "date");
    }
    return t != null ? t : JsonFields.time(r, "time");
  }

  static String first(String... values) {
    for (String v : values) {
      if (v != null && !v.isEmpty()) {
        return v;
      }
    }
    return null;
  }
}
