package dev.cudawatch.processor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.Topics;
import dev.cudawatch.kafka.embedded.KafkaBrokerExtension;
import dev.cudawatch.processor.config.ProcessorSettings;
import dev.cudawatch.processor.formats.InputSettings;
import dev.cudawatch.testkit.Await;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidTimestampException;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The job's topic setup on a real broker: a node whose clock is a year ahead can ship its lines
 * once the logs topic takes the broker's time, and the setup fixes a logs topic that a shipper's
 * producer auto-created with the default (CreateTime).
 */
class TopicSetupIT {
  @RegisterExtension static final KafkaBrokerExtension BROKER = new KafkaBrokerExtension();

  @Test
  void aLogsTopicMadeWithTheProducersClockIsFixedAndANodeAYearAheadCanShip() throws Exception {
    ProcessorSettings s =
        ProcessorSettings.builder()
            .kafka(
                ProcessorSettings.defaults()
                    .kafka()
                    .withBootstrapServers(BROKER.bootstrapServers()))
            .build();
    try (Admin admin = BROKER.admin()) {
      // as auto-creation leaves it: CreateTime, so the broker judges the producer's clock
      admin
          .createTopics(List.of(new NewTopic(Topics.LOGS, 1, (short) 1)))
          .all()
          .get(30, TimeUnit.SECONDS);
    }
    Instant yearAhead = Instant.now().plus(Duration.ofDays(365));
    try (KafkaProducer<String, String> p = producer()) {
      try {
        p.send(new ProducerRecord<>(Topics.LOGS, null, yearAhead.toEpochMilli(), "k", "v"))
            .get(30, TimeUnit.SECONDS);
        throw new AssertionError("the broker took a CreateTime a year ahead");
      } catch (java.util.concurrent.ExecutionException e) {
        assertTrue(e.getCause() instanceof InvalidTimestampException, e.getCause().toString());
      }
    }

    TopicSetup.Report first =
        TopicSetup.ensure(
            TopicSetup.clientProps(s), TopicSetup.wanted(s), Optional.empty(), Optional.empty());
    assertEquals(List.of(Topics.LOGS), first.altered(), first.summary());
    assertTrue(
        first.created().containsAll(List.of(Topics.INCIDENTS, Topics.ACTIONS, Topics.JOB_FAILURES)),
        first.summary());
    assertEquals(Topics.ALL.size() - 1, first.created().size(), first.summary());
    TopicSetup.Report again =
        TopicSetup.ensure(
            TopicSetup.clientProps(s), TopicSetup.wanted(s), Optional.empty(), Optional.empty());
    assertEquals(List.of(), again.created(), again.summary());
    assertEquals(List.of(), again.altered(), again.summary());

    try (Admin admin = BROKER.admin()) {
      ConfigResource res = new ConfigResource(ConfigResource.Type.TOPIC, Topics.LOGS);
      assertEquals(
          "LogAppendTime",
          admin
              .describeConfigs(List.of(res))
              .all()
              .get(30, TimeUnit.SECONDS)
              .get(res)
              .get("message.timestamp.type")
              .value());
    }
    Instant before = Instant.now();
    try (KafkaProducer<String, String> p = producer()) {
      p.send(new ProducerRecord<>(Topics.LOGS, null, yearAhead.toEpochMilli(), "k", "a year ahead"))
          .get(30, TimeUnit.SECONDS);
    }
    ConsumerRecord<String, String> got = readOne(Topics.LOGS);
    assertEquals("a year ahead", got.value());
    assertEquals(TimestampType.LOG_APPEND_TIME, got.timestampType());
    assertTrue(
        got.timestamp() < yearAhead.minus(Duration.ofDays(300)).toEpochMilli()
            && got.timestamp() >= before.toEpochMilli() - 60_000,
        "the broker's time, not the node's: " + Instant.ofEpochMilli(got.timestamp()));
  }

  @Test
  void everyInputTopicOfAShipperIsALogsTopic() {
    ProcessorSettings s =
        ProcessorSettings.builder()
            .inputs(
                List.of(
                    new InputSettings(Topics.LOGS, null, null),
                    new InputSettings("fluent-bit.gpu", "fluent-bit", null)))
            .build();
    Map<String, Map<String, String>> wanted = TopicSetup.wanted(s);
    assertTrue(wanted.keySet().containsAll(Topics.ALL), wanted.toString());
    assertEquals(Topics.configs(Topics.LOGS), wanted.get("fluent-bit.gpu"));
    assertEquals(Map.of("message.timestamp.type", "LogAppendTime"), wanted.get(Topics.LOGS));
    assertEquals(Map.of(), wanted.get(Topics.INCIDENTS));
  }

  private static KafkaProducer<String, String> producer() {
    return new KafkaProducer<>(
        Map.of(
            "bootstrap.servers",
            BROKER.bootstrapServers(),
            "retries",
            0,
            "delivery.timeout.ms",
            30_000,
            "request.timeout.ms",
            20_000,
            "linger.ms",
            0),
        new StringSerializer(),
        new StringSerializer());
  }

  private static ConsumerRecord<String, String> readOne(String topic) {
    try (KafkaConsumer<String, String> c =
        new KafkaConsumer<>(
            Map.of("bootstrap.servers", BROKER.bootstrapServers(), "enable.auto.commit", false),
            new StringDeserializer(),
            new StringDeserializer())) {
      TopicPartition tp = new TopicPartition(topic, 0);
      c.assign(List.of(tp));
      c.seekToBeginning(List.of(tp));
      return Await.until(
          "a record on " + topic,
          () -> {
            var got = c.poll(Duration.ofMillis(200));
            return got.isEmpty() ? null : got.iterator().next();
          },
          java.util.Objects::nonNull,
          Duration.ofSeconds(60));
    }
  }
}
