package dev.cudawatch.processor.formats;

import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.common.wire.WireFormatException;
import dev.cudawatch.processor.functions.FileRestarts;
import dev.cudawatch.processor.records.RawRecord;
import java.time.Instant;

/**
 * What every shipper format fills in, turned into the job's log record the same way for all: the
 * stream key is host, source (file or container), the file's identity where the shipper sends one,
 * and stream; without the shipper's own offset the Kafka offset stands in, per partition, so
 * duplicates are still dropped and lines stay in order. Where file offsets come without an
 * identity, {@link FileRestarts} tells a rotated file from a re-send.
 */
final class Shipped {
  String host;
  String job;
  Integer rank;
  String source;
  String sourceId;

  /** The file instance as the shipper identifies it (Filebeat's fingerprint or device:inode). */
  String fileId;

  String stream;
  RecordKind kind = RecordKind.LOG;
  Long offset;
  Instant time;
  String text;

  /** The record, or the reason it cannot be one; {@code index} numbers records of one batch. */
  LogRecord build(String format, RawRecord raw, int index) throws WireFormatException {
    require(host, format, "host");
    require(source, format, "source (file path or container)");
    if (text == null) { // an empty line is a line
      throw new WireFormatException(format + " record without message");
    }
    if (time == null) {
      throw new WireFormatException(format + " record without a timestamp");
    }
    long off;
    String id = sourceId;
    if (offset != null) {
      off = offset;
      if (fileId != null) {
        id = FileRestarts.IDENTIFIED + fileId; // a rotated file is a new stream
      }
    } else {
      // Kafka offsets grow per partition only; a batch's records share one (20 bits for the index).
      off = (raw.offset << 20) | index;
      id = (id == null ? "" : id + "/") + "kafka-" + raw.partition;
    }
    if (text.endsWith("\n")) { // container runtimes keep the newline in "log"
      text = text.substring(0, text.length() - (text.endsWith("\r\n") ? 2 : 1));
    }
    return LogRecord.builder().host(host).job(job).rank(rank).kind(kind).stream(
            stream == null ? (kind == RecordKind.KERNEL ? "kmsg" : "file") : stream)
        .source(source)
        .sourceId(id)
        .offset(off)
        .eventTime(time)
        .text(text)
        .build();
  }

  private static void require(String v, String format, String what) throws WireFormatException {
    if (v == null || v.isEmpty()) {
      throw new WireFormatException(format + " record without " + what);
    }
  }
}
