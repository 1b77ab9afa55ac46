package dev.cudawatch.processor.records;

import dev.cudawatch.common.wire.WireJson;
import org.apache.flink.api.common.serialization.SerializationSchema;

/** Writes any wire record as its versioned JSON. */
public final class JsonSerializer<T> implements SerializationSchema<T> {
  private static final long serialVersionUID = 1L;

  @Override
  public byte[] serialize(T element) {
    return WireJson.toBytes(element);
  }
}
