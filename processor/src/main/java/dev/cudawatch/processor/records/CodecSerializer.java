package dev.cudawatch.processor.records;

import java.io.IOException;
import java.io.UncheckedIOException;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.core.memory.DataOutputView;

/**
 * Writes a value as its codec's format version (one byte) and the codec's bytes, so every value in
 * a checkpoint or savepoint says how to read it: a newer codec reads older values as they come.
 */
public final class CodecSerializer<T> extends TypeSerializer<T> {
  private static final long serialVersionUID = 1L;
  private final Codec<T> codec;

  public CodecSerializer(Codec<T> codec) {
    if (codec.version() < 1 || codec.version() > 255) {
      throw new IllegalArgumentException(
          codec.getClass().getName() + ": format version must be 1 to 255");
    }
    this.codec = codec;
  }

  Codec<T> codec() {
    return codec;
  }

  @Override
  public boolean isImmutableType() {
    return codec.immutable();
  }

  @Override
  public TypeSerializer<T> duplicate() {
    return this; // codecs hold no state
  }

  @Override
  public T createInstance() {
    return null; // records have no empty instance; Flink never needs one from this serializer
  }

  @Override
  public T copy(T from) {
    if (from == null || codec.immutable()) {
      return from;
    }
    try {
      DataOutputSerializer out = new DataOutputSerializer(256);
      serialize(from, out);
      return deserialize(new DataInputDeserializer(out.getSharedBuffer(), 0, out.length()));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public T copy(T from, T reuse) {
    return copy(from);
  }

  @Override
  public int getLength() {
    return -1;
  }

  @Override
  public void serialize(T value, DataOutputView target) throws IOException {
    target.writeByte(codec.version());
    codec.write(value, target);
  }

  @Override
  public T deserialize(DataInputView source) throws IOException {
    int version = source.readUnsignedByte();
    if (version < 1 || version > codec.version()) {
      throw new IOException(
          codec.getClass().getSimpleName()
              + ": a value of format version "
              + version
              + ", this build reads 1 to "
              + codec.version());
    }
    return codec.read(version, source);
  }

  @Override
  public T deserialize(T reuse, DataInputView source) throws IOException {
    return deserialize(source);
  }

  @Override
  public void copy(DataInputView source, DataOutputView target) throws IOException {
    serialize(deserialize(source), target);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof CodecSerializer<?> s && s.codec.getClass() == codec.getClass();
  }

  @Override
  public int hashCode() {
    return codec.getClass().hashCode();
  }

  @Override
  public TypeSerializerSnapshot<T> snapshotConfiguration() {
    return new CodecSerializerSnapshot<>(codec);
  }
}
