package dev.cudawatch.common.io;

import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** The parts codecs are written from: nullable strings, numbers, times, lists and maps. */
public final class CodecIo {
  private static final byte NULL = 0;
  private static final byte LONG = 1;
  private static final byte DOUBLE = 2;
  private static final byte STRING = 3;
  private static final byte BOOLEAN = 4;
  private static final byte INTEGER = 5;
  private static final byte LIST = 6;
  private static final byte MAP = 7;

  private CodecIo() {}

  /** Length-prefixed UTF-8 (writeUTF stops at 64 KiB); -1 for null. */
  public static void writeString(String s, DataOutput out) throws IOException {
    if (s == null) {
      out.writeInt(-1);
      return;
    }
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    out.writeInt(b.length);
    out.write(b);
  }

  public static String readString(DataInput in) throws IOException {
    int n = in.readInt();
    if (n < 0) {
      return null;
    }
    byte[] b = new byte[n];
    in.readFully(b);
    return new String(b, StandardCharsets.UTF_8);
  }

  public static void writeBytes(byte[] b, DataOutput out) throws IOException {
    out.writeInt(b == null ? -1 : b.length);
    if (b != null) {
      out.write(b);
    }
  }

  public static byte[] readBytes(DataInput in) throws IOException {
    int n = in.readInt();
    if (n < 0) {
      return null;
    }
    byte[] b = new byte[n];
    in.readFully(b);
    return b;
  }

  public static void writeInteger(Integer i, DataOutput out) throws IOException {
    out.writeBoolean(i != null);
    if (i != null) {
      out.writeInt(i);
    }
  }

  public static Integer readInteger(DataInput in) throws IOException {
    return in.readBoolean() ? in.readInt() : null;
  }

  public static void writeLong(Long l, DataOutput out) throws IOException {
    out.writeBoolean(l != null);
    if (l != null) {
      out.writeLong(l);
    }
  }

  public static Long readLong(DataInput in) throws IOException {
    return in.readBoolean() ? in.readLong() : null;
  }

  public static void writeInstant(Instant t, DataOutput out) throws IOException {
    out.writeBoolean(t != null);
    if (t != null) {
      out.writeLong(t.getEpochSecond());
      out.writeInt(t.getNano());
    }
  }

  public static Instant readInstant(DataInput in) throws IOException {
    return in.readBoolean() ? Instant.ofEpochSecond(in.readLong(), in.readInt()) : null;
  }

  /** A name of {@code type}'s constants; an unknown name read back is an error naming it. */
  public static <E extends Enum<E>> void writeEnum(E e, DataOutput out) throws IOException {
    writeString(e == null ? null : e.name(), out);
  }

  public static <E extends Enum<E>> E readEnum(Class<E> type, DataInput in) throws IOException {
    String name = readString(in);
    if (name == null) {
      return null;
    }
    try {
      return Enum.valueOf(type, name);
    } catch (IllegalArgumentException e) {
      throw new IOException(type.getSimpleName() + " has no constant " + name, e);
    }
  }

  public static void writeStrings(List<String> list, DataOutput out) throws IOException {
    out.writeInt(list == null ? -1 : list.size());
    if (list != null) {
      for (String s : list) {
        writeString(s, out);
      }
    }
  }

  public static List<String> readStrings(DataInput in) throws IOException {
    int n = in.readInt();
    if (n < 0) {
      return null;
    }
    List<String> list = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      list.add(readString(in));
    }
    return list;
  }

  /**
   * A string map (labels, attribution) in key order, so equal maps write equal bytes whatever their
   * iteration order ({@code Map.copyOf}'s varies from run to run); -1 for null.
   */
  public static void writeStringMap(Map<String, String> map, DataOutput out) throws IOException {
    out.writeInt(map == null ? -1 : map.size());
    if (map != null) {
      for (Map.Entry<String, String> e : new TreeMap<>(map).entrySet()) {
        writeString(e.getKey(), out);
        writeString(e.getValue(), out);
      }
    }
  }

  public static Map<String, String> readStringMap(DataInput in) throws IOException {
    int n = in.readInt();
    if (n < 0) {
      return null;
    }
    Map<String, String> map = new LinkedHashMap<>();
    for (int i = 0; i < n; i++) {
      map.put(readString(in), readString(in));
    }
    return map;
  }

  /**
   * A field map (an incident's fields) in its order, each value tagged with its type so an Integer
   * comes back an Integer and a Long a Long; nested lists and maps too. A value of any other type
   * is written as its text, as the wire JSON would show it. -1 for null.
   */
  public static void writeValueMap(Map<String, ?> map, DataOutput out) throws IOException {
    out.writeInt(map == null ? -1 : map.size());
    if (map != null) {
      for (Map.Entry<String, ?> e : map.entrySet()) {
        writeString(e.getKey(), out);
        writeValue(e.getValue(), out);
      }
    }
  }

  public static Map<String, Object> readValueMap(DataInput in) throws IOException {
    int n = in.readInt();
    if (n < 0) {
      return null;
    }
    Map<String, Object> map = new LinkedHashMap<>();
    for (int i = 0; i < n; i++) {
      map.put(readString(in), readValue(in));
    }
    return map;
  }

  private static void writeValue(Object v, DataOutput out) throws IOException {
    if (v == null) {
      out.writeByte(NULL);
    } else if (v instanceof Long l) {
      out.writeByte(LONG);
      out.writeLong(l);
    } else if (v instanceof Integer i) {
      out.writeByte(INTEGER);
      out.writeInt(i);
    } else if (v instanceof Double d) {
      out.writeByte(DOUBLE);
      out.writeDouble(d);
    } else if (v instanceof Boolean b) {
      out.writeByte(BOOLEAN);
      out.writeBoolean(b);
    } else if (v instanceof List<?> list) {
      out.writeByte(LIST);
      out.writeInt(list.size());
      for (Object o : list) {
        writeValue(o, out);
      }
    } else if (v instanceof Map<?, ?> m) {
      out.writeByte(MAP);
      out.writeInt(m.size());
      for (Map.Entry<?, ?> e : m.entrySet()) {
        writeString(String.valueOf(e.getKey()), out);
        writeValue(e.getValue(), out);
      }
    } else {
      out.writeByte(STRING);
      writeString(v.toString(), out);
    }
  }

  private static Object readValue(DataInput in) throws IOException {
    byte tag = in.readByte();
    switch (tag) {
      case NULL:
        return null;
      case LONG:
        return in.readLong();
      case INTEGER:
        return in.readInt();
      case DOUBLE:
        return in.readDouble();
      case BOOLEAN:
        return in.readBoolean();
      case STRING:
        return readString(in);
      case LIST:
        {
          int n = in.readInt();
          List<Object> list = new ArrayList<>(n);
          for (int i = 0; i < n; i++) {
            list.add(readValue(in));
          }
          return list;
        }
      case MAP:
        {
          int n = in.readInt();
          Map<String, Object> m = new LinkedHashMap<>();
          for (int i = 0; i < n; i++) {
            m.put(readString(in), readValue(in));
          }
          return m;
        }
      default:
        throw new IOException("unknown field value tag " + tag);
    }
  }
}
