package dev.cudawatch.processor.rules;

import static dev.cudawatch.common.io.CodecIo.readEnum;
import static dev.cudawatch.common.io.CodecIo.readString;
import static dev.cudawatch.common.io.CodecIo.readStringMap;
import static dev.cudawatch.common.io.CodecIo.writeEnum;
import static dev.cudawatch.common.io.CodecIo.writeString;
import static dev.cudawatch.common.io.CodecIo.writeStringMap;

import dev.cudawatch.processor.records.Codec;
import dev.cudawatch.processor.records.CodecTypeInfo;
import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;

/** What a silence rule learns about a job, between the job's output and the rule. */
public final class JobSignalCodec implements Codec<JobSignal> {
  private static final long serialVersionUID = 1L;
  public static final CodecTypeInfo<JobSignal> TYPE =
      new CodecTypeInfo<>(JobSignal.class, new JobSignalCodec());

  @Override
  public int version() {
    return 1;
  }

  @Override
  public void write(JobSignal s, DataOutput out) throws IOException {
    writeString(s.rule(), out);
    writeString(s.key(), out);
    writeStringMap(s.labels(), out);
    writeEnum(s.kind(), out);
    writeString(s.incidentClass(), out);
    out.writeLong(s.eventTimeMs());
  }

  @Override
  public JobSignal read(int version, DataInput in) throws IOException {
    return new JobSignal(
        readString(in),
        readString(in),
        readStringMap(in),
        readEnum(JobSignal.Kind.class, in),
        readString(in),
        in.readLong());
  }
}
