package dev.cudawatch.kafka.embedded;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EmbeddedKafkaBrokerTest {
  @TempDir Path dir;

  @Test
  void producesAndConsumesAndKeepsDataAcrossARestart() throws Exception {
    int bp;
    int cp;
    try (EmbeddedKafkaBroker b = EmbeddedKafkaBroker.start(dir)) {
      bp = b.brokerPort();
      cp = b.controllerPort();
      b.createTopics(List.of("t"), 1);
      try (var p =
          new KafkaProducer<String, String>(
              Map.of(
                  ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                  b.bootstrapServers(),
                  ProducerConfig.ACKS_CONFIG,
                  "all"),
              new StringSerializer(),
              new StringSerializer())) {
        for (int i = 0; i < 100; i++) {
          p.send(new ProducerRecord<>("t", "k", "v" + i)).get();
        }
      }
    }
    try (EmbeddedKafkaBroker b = EmbeddedKafkaBroker.start(dir, bp, cp)) {
      assertEquals(100, readAll(b.bootstrapServers(), "t", 100).size());
    }
  }

  static List<String> readAll(String bootstrap, String topic, int expect) {
    return TopicReader.readAll(
            bootstrap,
            topic,
            expect,
            java.time.Duration.ZERO,
            java.time.Duration.ofSeconds(30),
            false)
        .stream()
        .map(b -> new String(b, java.nio.charset.StandardCharsets.UTF_8))
        .toList();
  }
}
