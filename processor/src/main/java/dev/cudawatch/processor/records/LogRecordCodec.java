package dev.cudawatch.processor.records;

import static dev.cudawatch.common.io.CodecIo.readEnum;
import static dev.cudawatch.common.io.CodecIo.readInstant;
import static dev.cudawatch.common.io.CodecIo.readInteger;
import static dev.cudawatch.common.io.CodecIo.readString;
import static dev.cudawatch.common.io.CodecIo.readStringMap;
import static dev.cudawatch.common.io.CodecIo.writeEnum;
import static dev.cudawatch.common.io.CodecIo.writeInstant;
import static dev.cudawatch.common.io.CodecIo.writeInteger;
import static dev.cudawatch.common.io.CodecIo.writeString;
import static dev.cudawatch.common.io.CodecIo.writeStringMap;

import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;

/** A parsed log record between operators. */
public final class LogRecordCodec implements Codec<LogRecord> {
  private static final long serialVersionUID = 1L;
  public static final CodecTypeInfo<LogRecord> TYPE =
      new CodecTypeInfo<>(LogRecord.class, new LogRecordCodec());

  @Override
  public int version() {
    return 1;
  }

  @Override
  public void write(LogRecord r, DataOutput out) throws IOException {
    out.writeInt(r.v());
    writeString(r.id(), out);
    writeString(r.host(), out);
    writeString(r.job(), out);
    writeInteger(r.rank(), out);
    writeInteger(r.localRank(), out);
    writeInteger(r.gpu(), out);
    writeEnum(r.kind(), out);
    writeString(r.stream(), out);
    writeString(r.source(), out);
    writeString(r.sourceId(), out);
    out.writeLong(r.offset());
    writeInstant(r.eventTime(), out);
    writeInstant(r.ingestTime(), out);
    writeString(r.text(), out);
    out.writeInt(r.lineCount());
    writeString(r.raw(), out);
    writeString(r.gpuUuid(), out);
    writeStringMap(r.attribution(), out);
  }

  @Override
  public LogRecord read(int version, DataInput in) throws IOException {
    return new LogRecord(
        in.readInt(),
        readString(in),
        readString(in),
        readString(in),
        readInteger(in),
        readInteger(in),
        readInteger(in),
        readEnum(RecordKind.class, in),
        readString(in),
        readString(in),
        readString(in),
        in.readLong(),
        readInstant(in),
        readInstant(in),
        readString(in),
        in.readInt(),
        readString(in),
        readString(in),
        readStringMap(in));
  }
}
