package dev.cudawatch.processor.formats;

import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.WireFormatException;
import dev.cudawatch.processor.records.RawRecord;
import java.io.Serializable;
import java.util.List;

/**
 * Reads one Kafka record of some shipper's shape into the job's own log records. A record is read
 * whole or not at all: any part it cannot read fails all of it, with the reason.
 */
public interface RecordFormat extends Serializable {
  String CUDAWATCH = "cudawatch";
  String FLUENT_BIT = "fluent-bit";
  String VECTOR = "vector";
  String FILEBEAT = "filebeat";
  String OTLP = "otlp";
  String RSYSLOG = "rsyslog";
  List<String> NAMES = List.of(CUDAWATCH, FLUENT_BIT, VECTOR, FILEBEAT, OTLP, RSYSLOG);

  /** The log records in {@code raw} (OTLP batches hold several; the others one). */
  List<LogRecord> parse(RawRecord raw) throws WireFormatException;

  /** The format an input is configured with. */
  static RecordFormat of(InputSettings input) {
    Attribution a = new Attribution(input.jobPattern(), input.kernelFiles());
    return switch (input.format()) {
      case CUDAWATCH -> new CudawatchFormat();
      case FLUENT_BIT -> new FluentBitFormat(a);
      case VECTOR -> new VectorFormat(a);
      case FILEBEAT -> new FilebeatFormat(a);
      case OTLP -> new OtlpFormat(a);
      case RSYSLOG -> new RsyslogFormat(a);
      default -> throw new IllegalArgumentException("unknown record format " + input.format());
    };
  }
}
