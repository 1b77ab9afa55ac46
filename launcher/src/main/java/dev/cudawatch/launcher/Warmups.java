package dev.cudawatch.launcher;

import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.diagnosis.catalog.Catalog;
import dev.cudawatch.diagnosis.engine.Warmup;
import dev.cudawatch.ingest.ship.Shipper;
import java.io.PrintStream;
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
 * Every warm-up of {@code local}, in one place, called by {@link LocalCluster#start} as each part
 * comes up; all of them end before {@code local} reports started, so a failure written at once is
 * diagnosed by warm code. Measured with bench/run's first probe (latency-trace.md):
 *
 * <ol>
 *   <li>{@link #classifierInBackground}: the classifier's code is loaded and compiled while the
 *       broker starts, not on the first failure (a synthetic log classified in memory);
 *   <li>{@link #brokerInBackground}: a few transactions on a topic of its own, read back
 *       read_committed, so the broker's transaction paths are compiled before the job's first
 *       commit (cold, that commit took ~0.35 s longer than every later one); nothing reads the
 *       topic;
 *   <li>{@link #job}: quiet markers through the agent's shipper and the job (source, parsing, the
 *       keyed exchange, the classifier's state lookup); a marker on a stream with nothing open is
 *       stored and emits nothing (ClassifyStreamTest), and the rules that watch a job's output
 *       ignore markers. 2,000 markers did as well as 30,000 classified lines, which would leave a
 *       stream's state behind. They are sent once the broker runs, before the job is submitted,
 *       which reads them as it starts.
 * </ol>
 *
 * <p>The agent's own warm-up (40,000 lines of training output through its per-line path) went with
 * issue 35: ~2 s of CPU on the start's critical path on two cores, for no gain in the first
 * incident's latency (bench/results/profile-local-start.md).
 *
 * <p>What the parts warm for themselves in any process stays with them: the JSON codec ({@code
 * WireJson.warmUpInBackground}) in the shipper and the alerts service, the job's per-record paths
 * in the operators' {@code open} (ParseLogRecords, ClassifyStream), which run where Flink places
 * them.
 */
final class Warmups {
  /** The broker warm-up's topic. */
  static final String BROKER_TOPIC = "cudawatch.local-warmup";

  /** The source of the job warm-up's quiet markers. */
  static final String JOB_SOURCE = "cudawatch-local-warmup";

  /** Transactions committed and read back by the broker warm-up. */
  static final int BROKER_TRANSACTIONS = 30;

  /** Quiet markers sent through the agent's shipper and the job. */
  static final int JOB_MARKERS = 2000;

  /** Rounds of the classifier's synthetic log. */
  static final int CLASSIFIER_ROUNDS = 300;

  private final PrintStream console;
  private Thread broker;

  Warmups(PrintStream console) {
    this.console = console;
  }

  /** Classifies a synthetic log in memory on a daemon thread; sends nothing anywhere. */
  void classifierInBackground() {
    daemon(() -> Warmup.run(Catalog.builtIn(), CLASSIFIER_ROUNDS), "cudawatch-warmup");
  }

  /**
   * Commits and reads back transactions on {@link #BROKER_TOPIC} of the broker at {@code bootstrap}
   * (the topic must exist) on a daemon thread; {@link #awaitBroker} waits for it.
   */
  void brokerInBackground(String bootstrap) {
    broker =
        daemon(
            () -> {
              try {
                brokerTransactions(bootstrap);
              } catch (RuntimeException e) {
                // only the first commit's speed depends on it
                console.println("cudawatch local: broker warm-up: " + e.getMessage());
              }
            },
            "cudawatch-broker-warmup");
  }

  /** Waits at most {@code timeout} for the broker warm-up. */
  void awaitBroker(Duration timeout) throws InterruptedException {
    if (broker != null) {
      broker.join(timeout.toMillis());
    }
  }

  /** Sends {@link #JOB_MARKERS} quiet markers and waits until the broker has them all. */
  static void job(Shipper shipper, String host) {
    Instant at = Instant.now();
    LogRecord stream =
        LogRecord.builder().host(host).source(JOB_SOURCE).stream("file")
            .eventTime(at)
            .text("")
            .build();
    for (int i = 0; i < JOB_MARKERS; i++) {
      shipper.send(stream.quietAt(i + 1L, at), () -> {});
    }
    shipper.flush();
  }

  private static void brokerTransactions(String bootstrap) {
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
      for (int i = 0; i < BROKER_TRANSACTIONS; i++) {
        producer.beginTransaction();
        producer.send(new ProducerRecord<>(BROKER_TOPIC, new byte[] {(byte) i}));
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
      List<TopicPartition> parts = List.of(new TopicPartition(BROKER_TOPIC, 0));
      consumer.assign(parts);
      consumer.seekToBeginning(parts);
      int read = 0;
      Instant deadline = Instant.now().plusSeconds(10);
      while (read < BROKER_TRANSACTIONS && Instant.now().isBefore(deadline)) {
        read += consumer.poll(Duration.ofMillis(50)).count();
      }
    }
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    t.start();
    return t;
  }
}
