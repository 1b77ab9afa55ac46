package dev.cudawatch.launcher;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Commits a few transactions to a topic of its own on {@code local}'s embedded broker and reads
 * them back read_committed, so the broker's transaction paths (add partitions, end transaction,
 * markers, the last stable offset) are compiled before the job's first commit: cold, that commit
 * took ~0.35 s longer than every later one (bench/run's first-incident trace). Nothing of the
 * pipeline reads the topic.
 */
final class BrokerWarmup {
  static final String TOPIC = "cudawatch.local-warmup";
  private static final int TRANSACTIONS = 30;

  private BrokerWarmup() {}

  static void run(String bootstrap) {
    Map<String, Object> p =
        Map.of(
            ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
            bootstrap,
            ProducerConfig.TRANSACTIONAL_ID_CONFIG,
            "cudawatch-local-warmup",
            ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG,
            ByteArraySerializer.class,
            ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG,
            ByteArraySerializer.class);
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
      producer.initTransactions();
      for (int i = 0; i < TRANSACTIONS; i++) {
        producer.beginTransaction();
        producer.send(new ProducerRecord<>(TOPIC, new byte[] {(byte) i}));
        producer.commitTransaction();
      }
    }
    Map<String, Object> c =
        Map.of(
            ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
            bootstrap,
            ConsumerConfig.ISOLATION_LEVEL_CONFIG,
            "read_committed",
            ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG,
            ByteArrayDeserializer.class,
            ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG,
            ByteArrayDeserializer.class);
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(c)) {
      List<TopicPartition> parts = List.of(new TopicPartition(TOPIC, 0));
      consumer.assign(parts);
      consumer.seekToBeginning(parts);
      int read = 0;
      Instant deadline = Instant.now().plusSeconds(10);
      while (read < TRANSACTIONS && Instant.now().isBefore(deadline)) {
        read += consumer.poll(Duration.ofMillis(50)).count();
      }
    }
  }
}
