package dev.cudawatch.diagnosis.engine;

import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
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
   * incident's preamble.
   */
  public static final int VERSION = 2;

  private static final byte NULL = 0;
  private static final byte LONG = 1;
  private static final byte DOUBLE = 2;
  private static final byte STRING = 3;
  private static final byte BOOLEAN = 4;
  private static final byte INTEGER = 5;

  private StreamStateCodec() {}

  public static void write(StreamState s, DataOutput out) throws IOException {
    out.writeByte(VERSION);
    out.writeLong(s.lineNo);
    out.writeInt(s.open.size());
    for (OpenIncident o : s.open) {
      writeIncident(o, out);
    }
    writeString(s.rootId, out);
    writeString(s.rootClass, out);
    out.writeLong(s.lastFailureLine);
    writeString(s.userFrame, out);
    out.writeLong(s.tracebackLine);
    out.writeLong(s.droppedConsequences);
    out.writeBoolean(s.context != null);
    if (s.context != null) {
      writeString(s.context.host(), out);
      writeString(s.context.job(), out);
      writeString(s.context.source(), out);
    }
    writeFields(s.preamble, out);
    out.writeInt(s.preambleFor == null ? -1 : s.preambleFor.size());
    if (s.preambleFor != null) {
      for (String c : s.preambleFor) {
        writeString(c, out);
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
    s.rootId = readString(in);
    s.rootClass = readString(in);
    s.lastFailureLine = in.readLong();
    s.userFrame = readString(in);
    s.tracebackLine = in.readLong();
    s.droppedConsequences = in.readLong();
    if (in.readBoolean()) {
      s.context = new StreamContext(readString(in), readString(in), readString(in));
    }
    if (version >= 2) {
      s.preamble = readFields(in);
      int classes = in.readInt();
      if (classes >= 0) {
        s.preambleFor = new LinkedHashSet<>();
        for (int i = 0; i < classes; i++) {
          s.preambleFor.add(readString(in));
        }
      }
      s.preambleLine = in.readLong();
      s.inDiffHunk = in.readBoolean();
    }
    return s;
  }

  private static void writeIncident(OpenIncident o, DataOutput out) throws IOException {
    writeString(o.id, out);
    writeString(o.incidentClass, out);
    writeString(o.signatureId, out);
    out.writeBoolean(o.root);
    writeString(o.rootId, out);
    out.writeInt(o.count);
    writeFields(o.fields, out);
    out.writeLong(o.firstLine);
    out.writeLong(o.lastLine);
    writeString(o.firstRecordId, out);
    out.writeBoolean(o.eventTime != null);
    if (o.eventTime != null) {
      out.writeLong(o.eventTime.getEpochSecond());
      out.writeInt(o.eventTime.getNano());
    }
    out.writeInt(o.excerpt.size());
    for (String line : o.excerpt) {
      writeString(line, out);
    }
    writeString(o.framework, out);
    writeString(o.suspect, out);
    writeString(o.severity, out);
    writeFields(o.preamble, out);
  }

  /** A field map in its order; -1 for null. */
  private static void writeFields(Map<String, Object> fields, DataOutput out) throws IOException {
    if (fields == null) {
      out.writeInt(-1);
      return;
    }
    out.writeInt(fields.size());
    for (Map.Entry<String, Object> e : fields.entrySet()) {
      writeString(e.getKey(), out);
      writeValue(e.getValue(), out);
    }
  }

  private static LinkedHashMap<String, Object> readFields(DataInput in) throws IOException {
    int n = in.readInt();
    if (n < 0) {
      return null;
    }
    LinkedHashMap<String, Object> f = new LinkedHashMap<>();
    for (int i = 0; i < n; i++) {
      f.put(readString(in), readValue(in));
    }
    return f;
  }

  private static OpenIncident readIncident(DataInput in, int version) throws IOException {
    OpenIncident o = new OpenIncident();
    o.id = readString(in);
    o.incidentClass = readString(in);
    o.signatureId = readString(in);
    o.root = in.readBoolean();
    o.rootId = readString(in);
    o.count = in.readInt();
    LinkedHashMap<String, Object> f = readFields(in);
    o.fields = f != null ? f : new LinkedHashMap<>();
    o.firstLine = in.readLong();
    o.lastLine = in.readLong();
    o.firstRecordId = readString(in);
    if (in.readBoolean()) {
      o.eventTime = Instant.ofEpochSecond(in.readLong(), in.readInt());
    }
    int lines = in.readInt();
    ArrayList<String> excerpt = new ArrayList<>(lines);
    for (int i = 0; i < lines; i++) {
      excerpt.add(readString(in));
    }
    o.excerpt = excerpt;
    o.framework = readString(in);
    o.suspect = readString(in);
    o.severity = readString(in);
    if (version >= 2) {
      o.preamble = readFields(in);
    }
    return o;
  }

  private static void writeValue(Object v, DataOutput out) throws IOException {
    if (v == null) {
      out.writeByte(NULL);
    } else if (v instanceof Long l) {
      out.writeByte(LONG);
      out.writeLong(l);
    } else if (v instanceof Double d) {
      out.writeByte(DOUBLE);
      out.writeDouble(d);
    } else if (v instanceof Boolean b) {
      out.writeByte(BOOLEAN);
      out.writeBoolean(b);
    } else if (v instanceof Integer i) {
      out.writeByte(INTEGER);
      out.writeInt(i);
    } else {
      out.writeByte(STRING);
      writeString(v.toString(), out);
    }
  }

  private static Object readValue(DataInput in) throws IOException {
    byte tag = in.readByte();
    return switch (tag) {
      case NULL -> null;
      case LONG -> in.readLong();
      case DOUBLE -> in.readDouble();
      case BOOLEAN -> in.readBoolean();
      case INTEGER -> in.readInt();
      case STRING -> readString(in);
      default -> throw new IOException("classifier state: unknown field value tag " + tag);
    };
  }

  /** Length-prefixed UTF-8 (writeUTF stops at 64 KiB); -1 for null. */
  private static void writeString(String s, DataOutput out) throws IOException {
    if (s == null) {
      out.writeInt(-1);
      return;
    }
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    out.writeInt(b.length);
    out.write(b);
  }

  private static String readString(DataInput in) throws IOException {
    int n = in.readInt();
    if (n < 0) {
      return null;
    }
    byte[] b = new byte[n];
    in.readFully(b);
    return new String(b, StandardCharsets.UTF_8);
  }
}
