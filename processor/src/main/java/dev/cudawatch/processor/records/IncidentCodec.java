package dev.cudawatch.processor.records;

import static dev.cudawatch.common.io.CodecIo.readInstant;
import static dev.cudawatch.common.io.CodecIo.readString;
import static dev.cudawatch.common.io.CodecIo.readStrings;
import static dev.cudawatch.common.io.CodecIo.readValueMap;
import static dev.cudawatch.common.io.CodecIo.writeInstant;
import static dev.cudawatch.common.io.CodecIo.writeString;
import static dev.cudawatch.common.io.CodecIo.writeStrings;
import static dev.cudawatch.common.io.CodecIo.writeValueMap;

import dev.cudawatch.common.wire.Incident;
import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;

/**
 * An incident between operators and in state (correlation's pending incidents). Its fields map is
 * mutable, so it is copied, not shared.
 */
public final class IncidentCodec implements Codec<Incident> {
  private static final long serialVersionUID = 1L;
  public static final CodecTypeInfo<Incident> TYPE =
      new CodecTypeInfo<>(Incident.class, new IncidentCodec());

  @Override
  public int version() {
    return 1;
  }

  @Override
  public boolean immutable() {
    return false;
  }

  @Override
  public void write(Incident i, DataOutput out) throws IOException {
    out.writeInt(i.v());
    writeString(i.id(), out);
    writeString(i.incidentClass(), out);
    out.writeBoolean(i.root());
    writeString(i.rootId(), out);
    out.writeInt(i.count());
    writeString(i.severity(), out);
    writeString(i.suspect(), out);
    writeString(i.signature(), out);
    writeValueMap(i.fields(), out);
    writeString(i.summary(), out);
    writeString(i.explanation(), out);
    writeStrings(i.nextSteps(), out);
    writeString(i.host(), out);
    writeString(i.job(), out);
    writeString(i.source(), out);
    out.writeLong(i.line());
    writeString(i.firstRecordId(), out);
    writeInstant(i.eventTime(), out);
    writeInstant(i.detectedTime(), out);
    writeStrings(i.excerpt(), out);
    writeString(i.verdict(), out);
  }

  @Override
  public Incident read(int version, DataInput in) throws IOException {
    return new Incident(
        in.readInt(),
        readString(in),
        readString(in),
        in.readBoolean(),
        readString(in),
        in.readInt(),
        readString(in),
        readString(in),
        readString(in),
        readValueMap(in),
        readString(in),
        readString(in),
        readStrings(in),
        readString(in),
        readString(in),
        readString(in),
        in.readLong(),
        readString(in),
        readInstant(in),
        readInstant(in),
        readStrings(in),
        readString(in));
  }
}
