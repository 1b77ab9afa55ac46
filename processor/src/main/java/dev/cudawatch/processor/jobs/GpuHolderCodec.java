package dev.cudawatch.processor.jobs;

import static dev.cudawatch.common.io.CodecIo.readInteger;
import static dev.cudawatch.common.io.CodecIo.readLong;
import static dev.cudawatch.common.io.CodecIo.readString;
import static dev.cudawatch.common.io.CodecIo.writeInteger;
import static dev.cudawatch.common.io.CodecIo.writeLong;
import static dev.cudawatch.common.io.CodecIo.writeString;

import dev.cudawatch.processor.records.Codec;
import dev.cudawatch.processor.records.CodecTypeInfo;
import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;

/** A GPU's holder, in kernel attribution's state and on its way there. */
public final class GpuHolderCodec implements Codec<GpuHolder> {
  private static final long serialVersionUID = 1L;
  public static final CodecTypeInfo<GpuHolder> TYPE =
      new CodecTypeInfo<>(GpuHolder.class, new GpuHolderCodec());

  @Override
  public int version() {
    return 1;
  }

  @Override
  public boolean immutable() {
    return false;
  }

  @Override
  public void write(GpuHolder h, DataOutput out) throws IOException {
    writeString(h.host, out);
    writeString(h.job, out);
    writeInteger(h.gpu, out);
    writeInteger(h.pid, out);
    out.writeLong(h.firstSeen);
    out.writeLong(h.lastSeen);
    writeLong(h.exitedAt, out);
  }

  @Override
  public GpuHolder read(int version, DataInput in) throws IOException {
    GpuHolder h = new GpuHolder();
    h.host = readString(in);
    h.job = readString(in);
    h.gpu = readInteger(in);
    h.pid = readInteger(in);
    h.firstSeen = in.readLong();
    h.lastSeen = in.readLong();
    h.exitedAt = readLong(in);
    return h;
  }
}
