package dev.cudawatch.processor.formats;

import static dev.cudawatch.processor.formats.FluentBitFormat.first;
import static dev.cudawatch.processor.formats.JsonFields.text;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.common.wire.WireFormatException;
import dev.cudawatch.processor.records.RawRecord;
import java.util.List;
import java.util.Map;

/**
 * Vector's Kafka sink with {@code encoding.codec: json}: the file source's {@code message}, {@code
 * timestamp}, {@code host}, {@code file}, {@code source_type}; the kubernetes_logs source adds
 * {@code stream} and {@code kubernetes.pod_name}, {@code pod_namespace}, {@code container_name},
 * {@code pod_labels}, {@code pod_node_name}. With {@code offset_key: offset} the file source sends
 * each line's byte offset (no file identity: a rotated file is told by its offsets, see {@link
 * dev.cudawatch.processor.functions.FileRestarts}); without it the Kafka offset stands in.
 */
public final class VectorFormat implements RecordFormat {
  private static final long serialVersionUID = 1L;
  private final Attribution attribution;

  public VectorFormat(Attribution attribution) {
    this.attribution = attribution;
  }

  @Override
  public List<LogRecord> parse(RawRecord raw) throws WireFormatException {
    JsonNode r = JsonFields.object(raw.value, VECTOR);
    if (JsonFields.at(r, "message") == null) {
      throw new WireFormatException("vector record without \"message\"");
    }
    Shipped s = new Shipped();
    s.text = text(r, "message");
    s.time = JsonFields.time(r, "timestamp");
    s.host = first(text(r, "host"), text(r, "kubernetes", "pod_node_name"));
    String file = text(r, "file");
    String pod = text(r, "kubernetes", "pod_name");
    s.source =
        file != null
            ? file
            : pod == null
                ? null
                : text(r, "kubernetes", "pod_namespace")
                    + "/"
                    + pod
                    + "/"
                    + text(r, "kubernetes", "container_name");
    s.stream = text(r, "stream");
    if (file != null) {
      s.offset = JsonFields.offset(r, "offset"); // the file source's offset_key: a line's start
    }
    String type = text(r, "source_type");
    s.kind =
        attribution.kernelFile(file) || "kernel".equals(text(r, "_TRANSPORT"))
            ? RecordKind.KERNEL
            : RecordKind.LOG;
    if (s.source == null && "journald".equals(type)) {
      s.source = "journald:" + first(text(r, "SYSLOG_IDENTIFIER"), text(r, "_TRANSPORT"));
    }
    Map<String, String> labels = JsonFields.labels(r, "kubernetes", "pod_labels");
    s.job = attribution.job(file, labels);
    s.rank = attribution.rank(file, labels);
    return List.of(s.build(VECTOR, raw, 0));
  }
}
