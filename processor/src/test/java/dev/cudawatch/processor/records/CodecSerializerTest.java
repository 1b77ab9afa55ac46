package dev.cudawatch.processor.records;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.io.CodecIo;
import dev.cudawatch.common.wire.LogRecord;
import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.junit.jupiter.api.Test;

/** The mechanism itself: old values read by a newer codec, newer ones refused with a reason. */
class CodecSerializerTest {
  /** A type as it was first written: a name. */
  public static final class NameV1 implements Codec<String[]> {
    private static final long serialVersionUID = 1L;

    @Override
    public int version() {
      return 1;
    }

    @Override
    public void write(String[] v, DataOutput out) throws IOException {
      CodecIo.writeString(v[0], out);
    }

    @Override
    public String[] read(int version, DataInput in) throws IOException {
      return new String[] {CodecIo.readString(in)};
    }
  }

  /** The same type after it gained a field: version 2 reads version 1 with a default. */
  public static final class NameV2 implements Codec<String[]> {
    private static final long serialVersionUID = 1L;

    @Override
    public int version() {
      return 2;
    }

    @Override
    public void write(String[] v, DataOutput out) throws IOException {
      CodecIo.writeString(v[0], out);
      CodecIo.writeString(v[1], out);
    }

    @Override
    public String[] read(int version, DataInput in) throws IOException {
      String name = CodecIo.readString(in);
      return new String[] {name, version >= 2 ? CodecIo.readString(in) : "default"};
    }
  }

  @Test
  void aValueWrittenByTheOldFormatIsReadByTheNewCodec() throws IOException {
    byte[] old = CodecsTest.bytes(new CodecSerializer<>(new NameV1()), new String[] {"a"});
    String[] read = new CodecSerializer<>(new NameV2()).deserialize(new DataInputDeserializer(old));
    assertEquals("a", read[0]);
    assertEquals("default", read[1]);
  }

  @Test
  void aValueOfANewerFormatIsRefusedWithItsVersion() throws IOException {
    byte[] newer = CodecsTest.bytes(new CodecSerializer<>(new NameV2()), new String[] {"a", "b"});
    IOException e =
        assertThrows(
            IOException.class,
            () ->
                new CodecSerializer<>(new NameV1()).deserialize(new DataInputDeserializer(newer)));
    assertTrue(
        e.getMessage().contains("format version 2, this build reads 1 to 1"), e.getMessage());
  }

  @Test
  void stateFromANewerBuildOrAnotherCodecIsIncompatible() throws IOException {
    DataOutputSerializer out = new DataOutputSerializer(64);
    out.writeUTF(LogRecordCodec.class.getName());
    out.writeInt(LogRecordCodec.TYPE.serializer().codec().version() + 1);
    CodecSerializerSnapshot<LogRecord> newer = new CodecSerializerSnapshot<>();
    newer.readSnapshot(1, new DataInputDeserializer(out.getCopyOfBuffer()), loader());
    assertTrue(
        LogRecordCodec.TYPE
            .serializer()
            .snapshotConfiguration()
            .resolveSchemaCompatibility(newer)
            .isIncompatible());

    @SuppressWarnings({"unchecked", "rawtypes"})
    TypeSerializerSnapshot<LogRecord> other =
        (TypeSerializerSnapshot) IncidentCodec.TYPE.serializer().snapshotConfiguration();
    assertTrue(
        LogRecordCodec.TYPE
            .serializer()
            .snapshotConfiguration()
            .resolveSchemaCompatibility(other)
            .isIncompatible());
  }

  @Test
  void aSnapshotNamingACodecThisBuildLacksSaysWhich() {
    DataOutputSerializer out = new DataOutputSerializer(64);
    IOException e =
        assertThrows(
            IOException.class,
            () -> {
              out.writeUTF("dev.cudawatch.Gone");
              out.writeInt(1);
              new CodecSerializerSnapshot<LogRecord>()
                  .readSnapshot(1, new DataInputDeserializer(out.getCopyOfBuffer()), loader());
            });
    assertTrue(e.getMessage().contains("dev.cudawatch.Gone"), e.getMessage());
  }

  private static ClassLoader loader() {
    return CodecSerializerTest.class.getClassLoader();
  }
}
