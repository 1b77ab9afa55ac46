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
 * rsyslog's omkafka with the {@code cudawatch_json} template of {@code
 * deploy/shippers/rsyslog/cudawatch.conf}: {@code msg}, {@code hostname}, {@code timestamp} (RFC
 * 3339), {@code programname}, {@code syslogtag}, {@code facility}, and imfile's metadata {@code
 * filename} and {@code fileoffset}. Lines of the kern facility (imklog) or of a kernel-log file
 * become kernel records; a {@code kernel} tag alone does not (any user can set it).
 */
public final class RsyslogFormat implements RecordFormat {
  private static final long serialVersionUID = 1L;
  private final Attribution attribution;

  public RsyslogFormat(Attribution attribution) {
    this.attribution = attribution;
  }

  @Override
  public List<LogRecord> parse(RawRecord raw) throws WireFormatException {
    JsonNode r = JsonFields.object(raw.value, RSYSLOG);
    if (JsonFields.at(r, "msg") == null) {
      throw new WireFormatException("rsyslog record without \"msg\"");
    }
    Shipped s = new Shipped();
    s.text = text(r, "msg");
    s.host = text(r, "hostname");
    s.time = JsonFields.time(r, "timestamp");
    String program = text(r, "programname");
    String file = blankToNull(text(r, "filename"));
    // the kern facility is the kernel's own (imklog); a tag is not: any user can log with `logger
    // -t kernel`, and only the kernel may speak for the hardware
    boolean kernel = "kern".equals(text(r, "facility")) || attribution.kernelFile(file);
    s.kind = kernel ? RecordKind.KERNEL : RecordKind.LOG;
    s.source = first(file, kernel ? "kernel" : null, program, text(r, "syslogtag"));
    s.offset = file == null ? null : JsonFields.offset(r, "fileoffset");
    Map<String, String> none = Map.of();
    s.job = attribution.job(file, none);
    s.rank = attribution.rank(file, none);
    return List.of(s.build(RSYSLOG, raw, 0));
  }

  private static String blankToNull(String v) {
    return v == null || v.isEmpty() ? null : v;
  }
}
