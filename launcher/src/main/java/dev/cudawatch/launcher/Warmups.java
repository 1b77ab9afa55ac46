package dev.cudawatch.launcher;

import dev.cudawatch.common.text.TrainingOutput;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.diagnosis.catalog.Catalog;
import dev.cudawatch.diagnosis.engine.Warmup;
import dev.cudawatch.ingest.Agent;
import dev.cudawatch.ingest.ship.Shipper;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
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
 *       stream's state behind;
 *   <li>{@link #agent}: healthy training output through the agent's per-line path, shipping
 *       nothing; without it the agent met its first lines cold and ran seconds behind.
 * </ol>
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

  /** Enough for the JIT's second tier to compile the agent's per-line path (~10,000 calls). */
  static final int AGENT_LINES = 40_000;

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

  /**
   * Writes {@link #AGENT_LINES} lines into {@code dir}, reads them through {@code agent} ({@link
   * Agent#warmUp}), and removes the file. Returns the lines read.
   */
  static long agent(Agent agent, Path dir) throws IOException {
    Files.createDirectories(dir);
    Path file = dir.resolve("agent-warmup.log");
    try {
      try (BufferedWriter w = Files.newBufferedWriter(file)) {
        for (int i = 0; i < AGENT_LINES; i++) {
          w.write(TrainingOutput.line(i));
          w.write('\n');
        }
      }
      return agent.warmUp(file);
    } finally {
      Files.deleteIfExists(file);
    }
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
