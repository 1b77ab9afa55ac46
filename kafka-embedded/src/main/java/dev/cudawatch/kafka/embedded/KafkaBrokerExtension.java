package dev.cudawatch.kafka.embedded;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A real embedded broker for a test class, in a temporary directory of its own:
 *
 * <pre>{@code
 * @RegisterExtension static final KafkaBrokerExtension BROKER = new KafkaBrokerExtension();
 * }</pre>
 *
 * A static field gets one broker for the class, started before the first test and stopped (its data
 * deleted) after the last; an instance field gets a fresh one per test, for tests that read a topic
 * from the start. {@link #stop()} and {@link #restart()} take it down and bring it back on the same
 * ports and data, for outage tests. JUnit's API is already on this module's classpath through
 * testkit.
 */
public final class KafkaBrokerExtension
    implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback {
  private final Collection<String> topics;
  private final int partitions;
  private Path dir;
  private EmbeddedKafkaBroker broker;
  private boolean perClass;

  /** A broker with no topics created up front. */
  public KafkaBrokerExtension() {
    this(List.of(), 1);
  }

  /** A broker on which {@code topics} exist (with their configs from Topics) before any test. */
  public KafkaBrokerExtension(Collection<String> topics, int partitions) {
    this.topics = List.copyOf(topics);
    this.partitions = partitions;
  }

  @Override
  public void beforeAll(ExtensionContext context) throws IOException {
    perClass = true; // only a static field's extension is called before all
    start();
  }

  @Override
  public void beforeEach(ExtensionContext context) throws IOException {
    if (!perClass) {
      start();
    }
  }

  @Override
  public void afterEach(ExtensionContext context) throws IOException {
    if (!perClass) {
      shutDown();
    }
  }

  @Override
  public void afterAll(ExtensionContext context) throws IOException {
    shutDown();
  }

  private void start() throws IOException {
    dir = Files.createTempDirectory("cudawatch-kafka-");
    broker = EmbeddedKafkaBroker.start(dir.resolve("kafka"));
    if (!topics.isEmpty()) {
      broker.createTopics(topics, partitions);
    }
  }

  private void shutDown() throws IOException {
    stop();
    if (dir != null) {
      try (Stream<Path> all = Files.walk(dir)) {
        for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(p);
        }
      }
      dir = null;
    }
  }

  /** The broker is gone (its clients see an outage); {@link #restart()} brings it back. */
  public void stop() {
    if (broker != null) {
      broker.close();
    }
  }

  /** Back on the same ports with the same data, as a restarted broker would be. */
  public void restart() throws IOException {
    EmbeddedKafkaBroker old = running();
    old.close();
    broker = EmbeddedKafkaBroker.start(old.dataDir(), old.brokerPort(), old.controllerPort());
  }

  /** The running broker. */
  public EmbeddedKafkaBroker broker() {
    return running();
  }

  public String bootstrapServers() {
    return running().bootstrapServers();
  }

  public Admin admin() {
    return running().admin();
  }

  /** Creates the topics that do not exist yet, with their configs from Topics. */
  public void createTopics(Collection<String> names, int partitions) throws IOException {
    running().createTopics(names, partitions);
  }

  /** A byte consumer of {@code group} reading {@code topics} from the earliest offset. */
  public KafkaConsumer<byte[], byte[]> consumer(String group, String... topics) {
    return consumer(group, Map.of(), topics);
  }

  /** As {@link #consumer(String, String...)}, with further consumer properties. */
  public KafkaConsumer<byte[], byte[]> consumer(
      String group, Map<String, Object> more, String... topics) {
    Map<String, Object> props = new HashMap<>(more);
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
    props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    props.putIfAbsent(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    var c =
        new KafkaConsumer<byte[], byte[]>(
            props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    c.subscribe(List.of(topics));
    return c;
  }

  /** A byte producer (acks=all, idempotent), with further producer properties. */
  public KafkaProducer<byte[], byte[]> producer(Map<String, Object> more) {
    Map<String, Object> props = new HashMap<>(more);
    props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
    props.putIfAbsent(ProducerConfig.ACKS_CONFIG, "all");
    props.putIfAbsent(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    return new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
  }

  public KafkaProducer<byte[], byte[]> producer() {
    return producer(Map.of());
  }

  /** {@link TopicReader#readAll}: values of {@code topic} until {@code expect} and then quiet. */
  public List<byte[]> readAll(
      String topic, int expect, Duration quiet, Duration timeout, boolean committedOnly) {
    return TopicReader.readAll(bootstrapServers(), topic, expect, quiet, timeout, committedOnly);
  }

  /** {@link TopicReader#readUntil}: values of {@code topic} until {@code done} and then quiet. */
  public List<byte[]> readUntil(
      String topic,
      Predicate<List<byte[]>> done,
      Duration quiet,
      Duration timeout,
      boolean committedOnly) {
    return TopicReader.readUntil(bootstrapServers(), topic, done, quiet, timeout, committedOnly);
  }

  private EmbeddedKafkaBroker running() {
    if (broker == null) {
      throw new IllegalStateException(
          "no broker: register KafkaBrokerExtension with @RegisterExtension");
    }
    return broker;
  }
}
