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
 * Filebeat's Kafka output (the default JSON codec): {@code message}, {@code @timestamp}, {@code
 * host.name}, {@code log.file.path}, {@code log.offset} (the line's byte offset: the de-duplication
 * key), the file instance from {@code log.file.fingerprint} (filestream's fingerprint identity) or
 * {@code log.file.device_id}/{@code inode}, {@code stream} of container inputs and the
 * add_kubernetes_metadata {@code kubernetes.*} block.
 */
public final class FilebeatFormat implements RecordFormat {
  private static final long serialVersionUID = 1L;
  private final Attribution attribution;

  public FilebeatFormat(Attribution attribution) {
    this.attribution = attribution;
  }

  @Override
  public List<LogRecord> parse(RawRecord raw) throws WireFormatException {
    JsonNode r = JsonFields.object(raw.value, FILEBEAT);
    if (JsonFields.at(r, "message") == null) {
      throw new WireFormatException("filebeat record without \"message\"");
    }
    Shipped s = new Shipped();
    s.text = text(r, "message");
    s.time = JsonFields.time(r, "@timestamp");
    s.host = first(text(r, "host", "name"), text(r, "kubernetes", "node", "name"));
    String file = text(r, "log", "file", "path");
    s.source = file;
    // the file instance: filestream's fingerprint identity (first bytes' hash), else device:inode
    String inode = text(r, "log", "file", "inode");
    s.fileId =
        first(
            text(r, "log", "file", "fingerprint"),
            inode == null ? null : first(text(r, "log", "file", "device_id"), "") + ":" + inode);
    s.offset = JsonFields.offset(r, "log", "offset");
    s.stream = text(r, "stream");
    s.kind = attribution.kernelFile(file) ? RecordKind.KERNEL : RecordKind.LOG;
    Map<String, String> labels = JsonFields.labels(r, "kubernetes", "labels");
    s.job = attribution.job(file, labels);
    s.rank = attribution.rank(file, labels);
    return List.of(s.build(FILEBEAT, raw, 0));
  }
}
