package dev.cudawatch.processor.records;

import static dev.cudawatch.common.io.CodecIo.readEnum;
import static dev.cudawatch.common.io.CodecIo.readInstant;
import static dev.cudawatch.common.io.CodecIo.readString;
import static dev.cudawatch.common.io.CodecIo.readStringMap;
import static dev.cudawatch.common.io.CodecIo.writeEnum;
import static dev.cudawatch.common.io.CodecIo.writeInstant;
import static dev.cudawatch.common.io.CodecIo.writeString;
import static dev.cudawatch.common.io.CodecIo.writeStringMap;

import dev.cudawatch.common.wire.Alert;
import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;

/** An alert on its way to the alerts topic. */
public final class AlertCodec implements Codec<Alert> {
  private static final long serialVersionUID = 1L;
  public static final CodecTypeInfo<Alert> TYPE =
      new CodecTypeInfo<>(Alert.class, new AlertCodec());

  @Override
  public int version() {
    return 1;
  }

  @Override
  public void write(Alert a, DataOutput out) throws IOException {
    out.writeInt(a.v());
    writeString(a.fingerprint(), out);
    writeEnum(a.state(), out);
    writeStringMap(a.labels(), out);
    writeStringMap(a.annotations(), out);
    writeInstant(a.startsAt(), out);
    writeInstant(a.endsAt(), out);
  }

  @Override
  public Alert read(int version, DataInput in) throws IOException {
    return new Alert(
        in.readInt(),
        readString(in),
        readEnum(Alert.State.class, in),
        readStringMap(in),
        readStringMap(in),
        readInstant(in),
        readInstant(in));
  }
}
