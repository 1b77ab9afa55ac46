package dev.cudawatch.alerts.ingest;

import dev.cudawatch.alerts.metrics.AlertsMetrics;
import dev.cudawatch.common.Topics;
import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.DeadLetter;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.WireFormatException;
import dev.cudawatch.common.wire.WireJson;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads committed incidents and alerts. A record it cannot read goes to the dead-letter topic with
 * the reason, and is counted; the loop keeps running.
 */
public final class TopicConsumer implements Runnable, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(TopicConsumer.class);

  private final KafkaConsumer<byte[], byte[]> consumer;
  private final KafkaProducer<byte[], byte[]> deadLetters;
  private final AlertsMetrics metrics;
  private final Consumer<Incident> onIncident;
  private final Consumer<Alert> onAlert;
  private final Runnable afterBatch;
  private long lagCheckedAt = System.nanoTime() / 1_000_000 - 5_000; // due at once
  private final Clock clock;
  private volatile boolean assigned;
  private volatile boolean running = true;

  public TopicConsumer(
      KafkaSettings kafka,
      String groupId,
      AlertsMetrics metrics,
      Consumer<Incident> onIncident,
      Consumer<Alert> onAlert,
      Runnable afterBatch,
      Clock clock) {
    this.afterBatch = afterBatch;
    Map<String, Object> c = new HashMap<>(kafka.properties());
    c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
    c.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
    c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    c.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 1000);
    // incidents and alerts are few: a broker-side wait of 500 ms (the default) would be most of
    // their latency, so fetches return sooner; a site can still override it
    c.putIfAbsent(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 50);
    consumer = new KafkaConsumer<>(c, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    Map<String, Object> p = new HashMap<>(kafka.properties());
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    deadLetters = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
    this.metrics = metrics;
    this.onIncident = onIncident;
    this.onAlert = onAlert;
    this.clock = clock;
  }

  /** True once the consumer owns its partitions. */
  public boolean ready() {
    return assigned;
  }

  @Override
  public void run() {
    try {
      consumer.subscribe(List.of(Topics.INCIDENTS, Topics.ALERTS));
      while (running) {
        var records = consumer.poll(Duration.ofMillis(200));
        if (!consumer.assignment().isEmpty()) {
          assigned = true;
        }
        for (ConsumerRecord<byte[], byte[]> r : records) {
          handle(r);
        }
        if (!records.isEmpty()) {
          afterBatch.run(); // before the next poll commits these offsets
        }
        long nowMs = System.nanoTime() / 1_000_000; // an interval: the monotonic clock
        if (nowMs - lagCheckedAt >= 5_000 && assigned) {
          lagCheckedAt = nowMs;
          reportLag();
        }
      }
    } catch (WakeupException e) {
      // closing
    } catch (RuntimeException e) {
      LOG.error("alerts consumer stopped: {}", e.toString());
      assigned = false;
    } finally {
      consumer.close(Duration.ofSeconds(5));
      deadLetters.close(Duration.ofSeconds(5));
    }
  }

  /** Records behind the end of each topic (the last stable offset, as read_committed sees it). */
  private void reportLag() {
    var assignment = consumer.assignment();
    Map<org.apache.kafka.common.TopicPartition, Long> ends = consumer.endOffsets(assignment);
    Map<String, Long> byTopic = new HashMap<>();
    for (var tp : assignment) {
      long behind = Math.max(0, ends.getOrDefault(tp, 0L) - consumer.position(tp));
      byTopic.merge(tp.topic(), behind, Long::sum);
    }
    byTopic.forEach(metrics::consumerLag);
  }

  void handle(ConsumerRecord<byte[], byte[]> r) {
    metrics.consumed(r.topic());
    try {
      if (Topics.INCIDENTS.equals(r.topic())) {
        onIncident.accept(WireJson.readIncident(r.value()));
      } else {
        onAlert.accept(WireJson.readAlert(r.value()));
      }
    } catch (WireFormatException e) {
      metrics.deadLetter("alerts", r.topic());
      DeadLetter d =
          DeadLetter.of(
              "alerts",
              r.topic() + "/" + r.partition() + "@" + r.offset(),
              e.getMessage(),
              r.value(),
              clock.instant());
      deadLetters.send(new ProducerRecord<>(Topics.DEAD_LETTER, null, WireJson.toBytes(d)));
      LOG.warn(
          "dead letter from {}/{}@{}: {}", r.topic(), r.partition(), r.offset(), e.getMessage());
    }
  }

  @Override
  public void close() {
    running = false;
    consumer.wakeup();
  }
}
