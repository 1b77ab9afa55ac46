package dev.cudawatch.processor.records;

import static dev.cudawatch.common.io.CodecIo.readBytes;
import static dev.cudawatch.common.io.CodecIo.readString;
import static dev.cudawatch.common.io.CodecIo.writeBytes;
import static dev.cudawatch.common.io.CodecIo.writeString;

import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;

/** A Kafka record as read, from the source to the parser. */
public final class RawRecordCodec implements Codec<RawRecord> {
  private static final long serialVersionUID = 1L;
  public static final CodecTypeInfo<RawRecord> TYPE =
      new CodecTypeInfo<>(RawRecord.class, new RawRecordCodec());

  @Override
  public int version() {
    return 1;
  }

  @Override
  public boolean immutable() {
    return false;
  }

  @Override
  public void write(RawRecord r, DataOutput out) throws IOException {
    writeString(r.topic, out);
    out.writeInt(r.partition);
    out.writeLong(r.offset);
    writeBytes(r.value, out);
  }

  @Override
  public RawRecord read(int version, DataInput in) throws IOException {
    return new RawRecord(readString(in), in.readInt(), in.readLong(), readBytes(in));
  }
}
