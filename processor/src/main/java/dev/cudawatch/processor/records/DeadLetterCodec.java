package dev.cudawatch.processor.records;

import static dev.cudawatch.common.io.CodecIo.readInstant;
import static dev.cudawatch.common.io.CodecIo.readString;
import static dev.cudawatch.common.io.CodecIo.writeInstant;
import static dev.cudawatch.common.io.CodecIo.writeString;

import dev.cudawatch.common.wire.DeadLetter;
import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;

/** A record that could not be read, on its way to the dead-letter topic. */
public final class DeadLetterCodec implements Codec<DeadLetter> {
  private static final long serialVersionUID = 1L;
  public static final CodecTypeInfo<DeadLetter> TYPE =
      new CodecTypeInfo<>(DeadLetter.class, new DeadLetterCodec());

  @Override
  public int version() {
    return 1;
  }

  @Override
  public void write(DeadLetter d, DataOutput out) throws IOException {
    out.writeInt(d.v());
    writeString(d.stage(), out);
    writeString(d.topic(), out);
    writeString(d.reason(), out);
    writeString(d.payload(), out);
    writeInstant(d.time(), out);
  }

  @Override
  public DeadLetter read(int version, DataInput in) throws IOException {
    return new DeadLetter(
        in.readInt(),
        readString(in),
        readString(in),
        readString(in),
        readString(in),
        readInstant(in));
  }
}
