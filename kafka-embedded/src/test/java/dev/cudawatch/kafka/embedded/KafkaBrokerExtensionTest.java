package dev.cudawatch.kafka.embedded;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The extension's broker: topics made up front, records kept across a stop and restart. */
class KafkaBrokerExtensionTest {
  @RegisterExtension
  static final KafkaBrokerExtension BROKER = new KafkaBrokerExtension(List.of("t"), 2);

  @Test
  void theTopicsExistAndRecordsSurviveARestart() throws Exception {
    assertTrue(BROKER.admin().listTopics().names().get().contains("t"));
    try (var p = BROKER.producer()) {
      p.send(new ProducerRecord<>("t", "k".getBytes(StandardCharsets.UTF_8), new byte[] {1})).get();
    }
    String before = BROKER.bootstrapServers();
    BROKER.restart();
    assertEquals(before, BROKER.bootstrapServers());
    assertEquals(1, BROKER.readAll("t", 1, Duration.ZERO, Duration.ofSeconds(60), false).size());
  }
}
