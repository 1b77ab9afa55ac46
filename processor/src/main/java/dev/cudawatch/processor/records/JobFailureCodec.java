package dev.cudawatch.processor.records;

import static dev.cudawatch.common.io.CodecIo.readInstant;
import static dev.cudawatch.common.io.CodecIo.readInteger;
import static dev.cudawatch.common.io.CodecIo.readString;
import static dev.cudawatch.common.io.CodecIo.readStrings;
import static dev.cudawatch.common.io.CodecIo.writeInstant;
import static dev.cudawatch.common.io.CodecIo.writeInteger;
import static dev.cudawatch.common.io.CodecIo.writeString;
import static dev.cudawatch.common.io.CodecIo.writeStrings;

import dev.cudawatch.common.wire.JobFailure;
import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;

/** A failed job with its one root cause, on its way to the job failures topic. */
public final class JobFailureCodec implements Codec<JobFailure> {
  private static final long serialVersionUID = 1L;
  public static final CodecTypeInfo<JobFailure> TYPE =
      new CodecTypeInfo<>(JobFailure.class, new JobFailureCodec());

  @Override
  public int version() {
    return 2;
  }

  @Override
  public void write(JobFailure f, DataOutput out) throws IOException {
    out.writeInt(f.v());
    writeString(f.id(), out);
    writeString(f.job(), out);
    writeString(f.rootId(), out);
    writeString(f.rootClass(), out);
    writeString(f.host(), out);
    writeInteger(f.rank(), out);
    writeString(f.gpu(), out);
    writeString(f.summary(), out);
    writeStrings(f.consequences(), out);
    out.writeInt(f.consequenceCount());
    writeStrings(f.hosts(), out);
    out.writeInt(f.ranks());
    writeInstant(f.firstAt(), out);
    writeInstant(f.lastAt(), out);
    writeString(f.cause(), out);
    writeStrings(f.evidence(), out);
  }

  @Override
  public JobFailure read(int version, DataInput in) throws IOException {
    JobFailure f = readV1(in);
    if (version < 2) {
      return f;
    }
    return new JobFailure(
        f.v(),
        f.id(),
        f.job(),
        f.rootId(),
        f.rootClass(),
        f.host(),
        f.rank(),
        f.gpu(),
        f.summary(),
        f.consequences(),
        f.consequenceCount(),
        f.hosts(),
        f.ranks(),
        f.firstAt(),
        f.lastAt(),
        readString(in),
        readStrings(in));
  }

  private static JobFailure readV1(DataInput in) throws IOException {
    return new JobFailure(
        in.readInt(),
        readString(in),
        readString(in),
        readString(in),
        readString(in),
        readString(in),
        readInteger(in),
        readString(in),
        readString(in),
        readStrings(in),
        in.readInt(),
        readStrings(in),
        in.readInt(),
        readInstant(in),
        readInstant(in),
        null,
        null);
  }
}
