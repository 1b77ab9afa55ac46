package dev.cudawatch.processor.records;

import java.nio.charset.StandardCharsets;
import org.apache.flink.api.common.serialization.SerializationSchema;
import org.apache.flink.util.function.SerializableFunction;

/** A record's Kafka key, so each key's records stay in order on one partition. */
public final class KeySerializer<T> implements SerializationSchema<T> {
  private static final long serialVersionUID = 1L;
  private final SerializableFunction<T, String> key;

  public KeySerializer(SerializableFunction<T, String> key) {
    this.key = key;
  }

  @Override
  public byte[] serialize(T element) {
    String k = key.apply(element);
    return k == null ? null : k.getBytes(StandardCharsets.UTF_8);
  }
}
