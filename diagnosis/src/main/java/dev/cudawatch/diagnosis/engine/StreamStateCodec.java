package dev.cudawatch.diagnosis.engine;

import dev.cudawatch.common.io.CodecIo;
import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;

/**
 * The binary form of a stream's classifier state, written field by field behind a format version,
 * so that checkpoints and savepoints survive these classes changing (a new field is a new version
 * that still reads the old ones) and no generic serializer (Kryo) is involved.
 */
public final class StreamStateCodec {
  /**
   * The version {@link #write} writes; {@link #read} reads this and every earlier one. 2 added the
   * stream's preamble (fields, classes, line) and whether it is inside a diff hunk, and each open
   * incident's preamble. 3 added each open incident's job (the job of the line that opened it).
   */
  public static final int VERSION = 3;

  private StreamStateCodec() {}

  public static void write(StreamState s, DataOutput out) throws IOException {
    out.writeByte(VERSION);
    out.writeLong(s.lineNo);
    out.writeInt(s.open.size());
    for (OpenIncident o : s.open) {
      writeIncident(o, out);
    }
    CodecIo.writeString(s.rootId, out);
    CodecIo.writeString(s.rootClass, out);
    out.writeLong(s.lastFailureLine);
    CodecIo.writeString(s.userFrame, out);
    out.writeLong(s.tracebackLine);
    out.writeLong(s.droppedConsequences);
    out.writeBoolean(s.context != null);
    if (s.context != null) {
      CodecIo.writeString(s.context.host(), out);
      CodecIo.writeString(s.context.job(), out);
      CodecIo.writeString(s.context.source(), out);
    }
    CodecIo.writeValueMap(s.preamble, out);
    out.writeInt(s.preambleFor == null ? -1 : s.preambleFor.size());
    if (s.preambleFor != null) {
      for (String c : s.preambleFor) {
        CodecIo.writeString(c, out);
      }
    }
    out.writeLong(s.preambleLine);
    out.writeBoolean(s.inDiffHunk);
  }

  public static StreamState read(DataInput in) throws IOException {
    int version = in.readUnsignedByte();
    if (version < 1 || version > VERSION) {
      throw new IOException(
          "classifier state of format version " + version + ": this build reads 1 to " + VERSION);
    }
    StreamState s = new StreamState();
    s.lineNo = in.readLong();
    int n = in.readInt();
    for (int i = 0; i < n; i++) {
      s.open.add(readIncident(in, version));
    }
    s.rootId = CodecIo.readString(in);
    s.rootClass = CodecIo.readString(in);
    s.lastFailureLine = in.readLong();
    s.userFrame = CodecIo.readString(in);
    s.tracebackLine = in.readLong();
    s.droppedConsequences = in.readLong();
    if (in.readBoolean()) {
      s.context =
          new StreamContext(CodecIo.readString(in), CodecIo.readString(in), CodecIo.readString(in));
    }
    if (version >= 2) {
      s.preamble = readFields(in);
      int classes = in.readInt();
      if (classes >= 0) {
        s.preambleFor = new LinkedHashSet<>();
        for (int i = 0; i < classes; i++) {
          s.preambleFor.add(CodecIo.readString(in));
        }
      }
      s.preambleLine = in.readLong();
      s.inDiffHunk = in.readBoolean();
    }
    return s;
  }

  private static void writeIncident(OpenIncident o, DataOutput out) throws IOException {
    CodecIo.writeString(o.id, out);
    CodecIo.writeString(o.incidentClass, out);
    CodecIo.writeString(o.signatureId, out);
    out.writeBoolean(o.root);
    CodecIo.writeString(o.rootId, out);
    out.writeInt(o.count);
    CodecIo.writeValueMap(o.fields, out);
    out.writeLong(o.firstLine);
    out.writeLong(o.lastLine);
    CodecIo.writeString(o.firstRecordId, out);
    out.writeBoolean(o.eventTime != null);
    if (o.eventTime != null) {
      out.writeLong(o.eventTime.getEpochSecond());
      out.writeInt(o.eventTime.getNano());
    }
    out.writeInt(o.excerpt.size());
    for (String line : o.excerpt) {
      CodecIo.writeString(line, out);
    }
    CodecIo.writeString(o.framework, out);
    CodecIo.writeString(o.suspect, out);
    CodecIo.writeString(o.severity, out);
    CodecIo.writeValueMap(o.preamble, out);
    CodecIo.writeString(o.job, out);
  }

  /** A field map in its order (the shared tagged format); null stays null. */
  private static LinkedHashMap<String, Object> readFields(DataInput in) throws IOException {
    Map<String, Object> f = CodecIo.readValueMap(in);
    return f == null ? null : new LinkedHashMap<>(f);
  }

  private static OpenIncident readIncident(DataInput in, int version) throws IOException {
    OpenIncident o = new OpenIncident();
    o.id = CodecIo.readString(in);
    o.incidentClass = CodecIo.readString(in);
    o.signatureId = CodecIo.readString(in);
    o.root = in.readBoolean();
    o.rootId = CodecIo.readString(in);
    o.count = in.readInt();
    LinkedHashMap<String, Object> f = readFields(in);
    o.fields = f != null ? f : new LinkedHashMap<>();
    o.firstLine = in.readLong();
    o.lastLine = in.readLong();
    o.firstRecordId = CodecIo.readString(in);
    if (in.readBoolean()) {
      o.eventTime = Instant.ofEpochSecond(in.readLong(), in.readInt());
    }
    int lines = in.readInt();
    ArrayList<String> excerpt = new ArrayList<>(lines);
    for (int i = 0; i < lines; i++) {
      excerpt.add(CodecIo.readString(in));
    }
    o.excerpt = excerpt;
    o.framework = CodecIo.readString(in);
    o.suspect = CodecIo.readString(in);
    o.severity = CodecIo.readString(in);
    if (version >= 2) {
      o.preamble = readFields(in);
    }
    if (version >= 3) {
      o.job = CodecIo.readString(in);
    }
    return o;
  }
}
