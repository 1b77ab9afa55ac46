package dev.cudawatch.processor.records;

import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;
import java.io.Serializable;

/**
 * The binary form of one type that crosses Flink state or a stream edge, behind a format version,
 * so savepoints survive the type changing and no generic serializer (Kryo) is ever involved.
 *
 * <p>To change a type: add or drop fields in {@link #write}, raise {@link #version()}, and teach
 * {@link #read} the old version (a default for a field it lacks); add the new version's bytes next
 * to the old ones under {@code src/test/resources/codecs/}. Never rename an implementing class: a
 * savepoint names it. Implementations hold no state and have a public no-arg constructor.
 */
public interface Codec<T> extends Serializable {
  /** The format version {@link #write} writes; {@link #read} reads it and every earlier one. */
  int version();

  void write(T value, DataOutput out) throws IOException;

  /** Reads a value written by format {@code version} (1 to {@link #version()}). */
  T read(int version, DataInput in) throws IOException;

  /** Values that never change after construction are shared, not copied, between operators. */
  default boolean immutable() {
    return true;
  }
}
