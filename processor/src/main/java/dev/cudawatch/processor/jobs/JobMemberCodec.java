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

/** What a job failure remembers of one incident, in its state. */
public final class JobMemberCodec implements Codec<JobMember> {
  private static final long serialVersionUID = 1L;
  public static final CodecTypeInfo<JobMember> TYPE =
      new CodecTypeInfo<>(JobMember.class, new JobMemberCodec());

  @Override
  public int version() {
    return 2;
  }

  @Override
  public boolean immutable() {
    return false;
  }

  @Override
  public void write(JobMember m, DataOutput out) throws IOException {
    writeString(m.id, out);
    writeString(m.incidentClass, out);
    writeString(m.host, out);
    writeInteger(m.rank, out);
    writeString(m.gpu, out);
    writeString(m.summary, out);
    out.writeLong(m.eventTime);
    out.writeBoolean(m.rootClass);
    writeInteger(m.localRank, out);
    writeString(m.pci, out);
    writeLong(m.seqNum, out);
    writeString(m.opType, out);
    writeLong(m.lastEnqueued, out);
    writeLong(m.lastCompleted, out);
    writeLong(m.pid, out);
    writeLong(m.exitCode, out);
    writeString(m.peer, out);
    out.writeBoolean(m.kernelEcho);
  }

  @Override
  public JobMember read(int version, DataInput in) throws IOException {
    JobMember m = new JobMember();
    m.id = readString(in);
    m.incidentClass = readString(in);
    m.host = readString(in);
    m.rank = readInteger(in);
    m.gpu = readString(in);
    m.summary = readString(in);
    m.eventTime = in.readLong();
    m.rootClass = in.readBoolean();
    if (version >= 2) {
      m.localRank = readInteger(in);
      m.pci = readString(in);
      m.seqNum = readLong(in);
      m.opType = readString(in);
      m.lastEnqueued = readLong(in);
      m.lastCompleted = readLong(in);
      m.pid = readLong(in);
      m.exitCode = readLong(in);
      m.peer = readString(in);
      m.kernelEcho = in.readBoolean();
    }
    return m;
  }
}
