package dev.cudawatch.kafka.embedded;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Predicate;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/** Reads a topic from the start, for checks in tests and harnesses. */
public final class TopicReader {
  private TopicReader() {}

  /**
   * Values of {@code topic}, read until at least {@code expect} arrived and the topic was then
   * quiet for {@code quiet} (so a duplicate would be seen too), or {@code timeout} passed.
   *
   * @param committedOnly read with {@code isolation.level=read_committed}
   */
  public static List<byte[]> readAll(
      String bootstrap,
      String topic,
      int expect,
      Duration quiet,
      Duration timeout,
      boolean committedOnly) {
    return readUntil(bootstrap, topic, out -> out.size() >= expect, quiet, timeout, committedOnly);
  }

  /**
   * Values of {@code topic}, read until {@code done} holds for what arrived and the topic was then
   * quiet for {@code quiet}, or {@code timeout} passed.
   */
  public static List<byte[]> readUntil(
      String bootstrap,
      String topic,
      Predicate<List<byte[]>> done,
      Duration quiet,
      Duration timeout,
      boolean committedOnly) {
    List<byte[]> out = new ArrayList<>();
    Map<String, Object> props =
        Map.of(
            ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
            bootstrap,
            ConsumerConfig.GROUP_ID_CONFIG,
            "reader-" + UUID.randomUUID(),
            ConsumerConfig.AUTO_OFFSET_RESET_CONFIG,
            "earliest",
            ConsumerConfig.MAX_POLL_RECORDS_CONFIG,
            5000,
            ConsumerConfig.ISOLATION_LEVEL_CONFIG,
            committedOnly ? "read_committed" : "read_uncommitted");
    try (var c =
        new KafkaConsumer<byte[], byte[]>(
            props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      c.subscribe(List.of(topic));
      long deadline = System.nanoTime() + timeout.toNanos();
      long lastRecord = System.nanoTime();
      while (System.nanoTime() < deadline
          && (!done.test(out) || System.nanoTime() - lastRecord < quiet.toNanos())) {
        var recs = c.poll(Duration.ofMillis(200));
        if (!recs.isEmpty()) {
          lastRecord = System.nanoTime();
        }
        recs.forEach(r -> out.add(r.value()));
      }
    }
    return out;
  }
}
