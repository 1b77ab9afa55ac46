package dev.cudawatch.processor.records;

import static dev.cudawatch.common.io.CodecIo.readInstant;
import static dev.cudawatch.common.io.CodecIo.readInteger;
import static dev.cudawatch.common.io.CodecIo.readString;
import static dev.cudawatch.common.io.CodecIo.readStringMap;
import static dev.cudawatch.common.io.CodecIo.writeInstant;
import static dev.cudawatch.common.io.CodecIo.writeInteger;
import static dev.cudawatch.common.io.CodecIo.writeString;
import static dev.cudawatch.common.io.CodecIo.writeStringMap;

import dev.cudawatch.common.wire.Action;
import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;

/** A remediation recommendation or shadowed alert on its way to the actions topic. */
public final class ActionCodec implements Codec<Action> {
  private static final long serialVersionUID = 1L;
  public static final CodecTypeInfo<Action> TYPE =
      new CodecTypeInfo<>(Action.class, new ActionCodec());

  @Override
  public int version() {
    return 1;
  }

  @Override
  public void write(Action a, DataOutput out) throws IOException {
    out.writeInt(a.v());
    writeString(a.id(), out);
    writeString(a.kind(), out);
    writeString(a.action(), out);
    writeString(a.reason(), out);
    writeString(a.host(), out);
    writeString(a.gpu(), out);
    writeString(a.gpuUuid(), out);
    writeString(a.job(), out);
    writeInteger(a.xid(), out);
    writeString(a.incidentId(), out);
    out.writeInt(a.ladderLevel());
    out.writeInt(a.recoveries());
    out.writeInt(a.incidents());
    out.writeBoolean(a.mtbiSeconds() != null);
    if (a.mtbiSeconds() != null) {
      out.writeDouble(a.mtbiSeconds());
    }
    writeInstant(a.at(), out);
    writeStringMap(a.labels(), out);
  }

  @Override
  public Action read(int version, DataInput in) throws IOException {
    return new Action(
        in.readInt(),
        readString(in),
        readString(in),
        readString(in),
        readString(in),
        readString(in),
        readString(in),
        readString(in),
        readString(in),
        readInteger(in),
        readString(in),
        in.readInt(),
        in.readInt(),
        in.readInt(),
        in.readBoolean() ? in.readDouble() : null,
        readInstant(in),
        readStringMap(in));
  }
}
