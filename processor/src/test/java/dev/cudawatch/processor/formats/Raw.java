package dev.cudawatch.processor.formats;

import dev.cudawatch.processor.records.RawRecord;
import java.nio.charset.StandardCharsets;

/** Kafka records for format tests: topic t, partition 1, the given offset. */
final class Raw {
  private Raw() {}

  static RawRecord of(long kafkaOffset, String json) {
    return new RawRecord("t", 1, kafkaOffset, json.getBytes(StandardCharsets.UTF_8));
  }
}
