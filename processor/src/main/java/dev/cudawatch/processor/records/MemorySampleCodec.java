package dev.cudawatch.processor.records;

import static dev.cudawatch.common.io.CodecIo.readString;
import static dev.cudawatch.common.io.CodecIo.writeString;

import dev.cudawatch.common.gpu.MemorySample;
import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;

/** One GPU memory sample, as the memory trend keeps them in state. */
public final class MemorySampleCodec implements Codec<MemorySample> {
  private static final long serialVersionUID = 1L;
  public static final CodecTypeInfo<MemorySample> TYPE =
      new CodecTypeInfo<>(MemorySample.class, new MemorySampleCodec());

  @Override
  public int version() {
    return 1;
  }

  @Override
  public void write(MemorySample s, DataOutput out) throws IOException {
    out.writeLong(s.epochMillis());
    out.writeInt(s.gpu());
    writeString(s.pci(), out);
    out.writeLong(s.usedBytes());
    out.writeLong(s.totalBytes());
  }

  @Override
  public MemorySample read(int version, DataInput in) throws IOException {
    return new MemorySample(
        in.readLong(), in.readInt(), readString(in), in.readLong(), in.readLong());
  }
}
