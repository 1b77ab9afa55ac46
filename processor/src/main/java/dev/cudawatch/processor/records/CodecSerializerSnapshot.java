package dev.cudawatch.processor.records;

import java.io.IOException;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSchemaCompatibility;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;
import org.apache.flink.util.InstantiationUtil;

/**
 * What a savepoint records of a {@link CodecSerializer}: the codec's class and the format version
 * it wrote. A restore with the same codec at that version or newer reads the state as it is (each
 * value carries its own version); an older build, or another codec, is refused with a reason.
 */
public final class CodecSerializerSnapshot<T> implements TypeSerializerSnapshot<T> {
  private static final int SNAPSHOT_VERSION = 1;
  private Codec<T> codec;
  private int formatVersion;

  /** For Flink, which reads the rest with {@link #readSnapshot}. */
  public CodecSerializerSnapshot() {}

  CodecSerializerSnapshot(Codec<T> codec) {
    this.codec = codec;
    this.formatVersion = codec.version();
  }

  /** The format version the snapshotted serializer wrote. */
  public int formatVersion() {
    return formatVersion;
  }

  @Override
  public int getCurrentVersion() {
    return SNAPSHOT_VERSION;
  }

  @Override
  public void writeSnapshot(DataOutputView out) throws IOException {
    out.writeUTF(codec.getClass().getName());
    out.writeInt(formatVersion);
  }

  @Override
  @SuppressWarnings("unchecked")
  public void readSnapshot(int readVersion, DataInputView in, ClassLoader loader)
      throws IOException {
    if (readVersion != SNAPSHOT_VERSION) {
      throw new IOException("codec serializer snapshot version " + readVersion + " is unknown");
    }
    String name = in.readUTF();
    formatVersion = in.readInt();
    try {
      Class<?> c = Class.forName(name, true, loader);
      codec = (Codec<T>) InstantiationUtil.instantiate(c.asSubclass(Codec.class), Codec.class);
    } catch (ClassNotFoundException | RuntimeException e) {
      throw new IOException("state written by codec " + name + ", which this build lacks", e);
    }
  }

  @Override
  public TypeSerializer<T> restoreSerializer() {
    return new CodecSerializer<>(codec);
  }

  @Override
  public TypeSerializerSchemaCompatibility<T> resolveSchemaCompatibility(
      TypeSerializerSnapshot<T> old) {
    if (!(old instanceof CodecSerializerSnapshot<T> o)
        || o.codec.getClass() != codec.getClass()
        || o.formatVersion > codec.version()) {
      return TypeSerializerSchemaCompatibility.incompatible();
    }
    return TypeSerializerSchemaCompatibility.compatibleAsIs();
  }
}
