package dev.cudawatch.processor.records;

import java.util.Objects;
import org.apache.flink.api.common.serialization.SerializerConfig;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.TypeSerializer;

/**
 * Flink's type information for a type written by a {@link Codec}: declare it on every operator that
 * outputs the type ({@code .returns(...)}) and in every state descriptor that holds it.
 */
public final class CodecTypeInfo<T> extends TypeInformation<T> {
  private static final long serialVersionUID = 1L;
  private final Class<T> type;
  private final Codec<T> codec;

  public CodecTypeInfo(Class<T> type, Codec<T> codec) {
    this.type = Objects.requireNonNull(type, "type");
    this.codec = Objects.requireNonNull(codec, "codec");
  }

  /** The serializer, also for state descriptors that take one directly. */
  public CodecSerializer<T> serializer() {
    return new CodecSerializer<>(codec);
  }

  @Override
  public boolean isBasicType() {
    return false;
  }

  @Override
  public boolean isTupleType() {
    return false;
  }

  @Override
  public int getArity() {
    return 1;
  }

  @Override
  public int getTotalFields() {
    return 1;
  }

  @Override
  public Class<T> getTypeClass() {
    return type;
  }

  @Override
  public boolean isKeyType() {
    return false;
  }

  @Override
  public TypeSerializer<T> createSerializer(SerializerConfig config) {
    return serializer();
  }

  @Override
  public String toString() {
    return type.getSimpleName() + " (" + codec.getClass().getSimpleName() + ")";
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof CodecTypeInfo<?> t
        && t.type == type
        && t.codec.getClass() == codec.getClass();
  }

  @Override
  public int hashCode() {
    return Objects.hash(type, codec.getClass());
  }

  @Override
  public boolean canEqual(Object o) {
    return o instanceof CodecTypeInfo;
  }
}
