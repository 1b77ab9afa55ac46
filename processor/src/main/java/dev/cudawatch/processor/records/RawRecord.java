package dev.cudawatch.processor.records;

import java.util.Arrays;
import java.util.Objects;

/**
 * A Kafka record as read, before its JSON is trusted: bad ones become dead letters, not crashes.
 */
public final class RawRecord {
  public String topic;
  public int partition;
  public long offset;
  public byte[] value;

  public RawRecord() {}

  public RawRecord(String topic, int partition, long offset, byte[] value) {
    this.topic = topic;
    this.partition = partition;
    this.offset = offset;
    this.value = value;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof RawRecord r
        && r.partition == partition
        && r.offset == offset
        && Objects.equals(r.topic, topic)
        && Arrays.equals(r.value, value);
  }

  @Override
  public int hashCode() {
    return Objects.hash(topic, partition, offset);
  }
}
