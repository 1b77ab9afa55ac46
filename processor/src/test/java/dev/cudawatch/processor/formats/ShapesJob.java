package dev.cudawatch.processor.formats;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cudawatch.common.Topics;
import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.common.wire.DeadLetter;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.WireFormatException;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.kafka.embedded.EmbeddedKafkaBroker;
import dev.cudawatch.kafka.embedded.TopicReader;
import dev.cudawatch.processor.ProcessorMain;
import dev.cudawatch.processor.config.ProcessorSettings;
import dev.cudawatch.processor.formats.ShipperShapes.Line;
import dev.cudawatch.processor.formats.ShipperShapes.Shape;
import dev.cudawatch.processor.guard.PoisonGuard;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Metric;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The whole job on a MiniCluster (parallelism 2) against a real broker, reading one topic per
 * shipper shape in that shape's format; with an in-memory metric reporter, so a test can read the
 * job's restart count and the operators' dead-letter counters.
 */
final class ShapesJob {
  /** The failure every good record carries: one line, one incident. */
  static final String FAILURE =
      "RuntimeError: CUDA error: an illegal memory access was encountered";

  static final String FAILURE_CLASS = "illegal_memory_access";
  static final Instant T0 = Instant.parse("2026-11-22T03:00:00Z");

  private ShapesJob() {}

  /** A MiniCluster whose metrics {@code reporter} keeps. */
  static MiniClusterExtension miniCluster(InMemoryReporter reporter) {
    return new MiniClusterExtension(
        new MiniClusterResourceConfiguration.Builder()
            .setNumberTaskManagers(1)
            .setNumberSlotsPerTaskManager(2)
            .setConfiguration(reporter.addToConfiguration(new Configuration()))
            .build());
  }

  static String topic(Shape s) {
    return "in." + s.name().toLowerCase();
  }

  static void createTopics(EmbeddedKafkaBroker broker) throws Exception {
    broker.createTopics(Topics.ALL, 2);
    broker.createTopics(Arrays.stream(Shape.values()).map(ShapesJob::topic).toList(), 1);
  }

  /** Starts the job reading every shape's topic, as its own consumer group. */
  static JobClient start(EmbeddedKafkaBroker broker, String group) throws Exception {
    List<InputSettings> inputs = new ArrayList<>();
    for (Shape s : Shape.values()) {
      inputs.add(new InputSettings(topic(s), s.format, ShipperShapes.JOB_PATTERN));
    }
    ProcessorSettings settings =
        ProcessorSettings.builder()
            .kafka(new KafkaSettings(broker.bootstrapServers(), Map.of()))
            .groupId(group)
            .transactionalIdPrefix(group + "-" + System.nanoTime())
            .inputs(inputs)
            .build();
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    ProcessorMain.configure(env, settings);
    ProcessorMain.job(settings).build(env);
    return env.executeAsync(group);
  }

  /** One good record of {@code shape}: the failure line in a stream named {@code stream}. */
  static byte[] good(Shape shape, String stream, int n) {
    return shape.records(List.of(new Line(null, stream, 0, T0.plusMillis(n), FAILURE))).get(0);
  }

  /** A JSON shape's record as a tree, to be made bad. */
  static ObjectNode tree(byte[] record) {
    try {
      return (ObjectNode) WireJson.mapper().readTree(record);
    } catch (java.io.IOException e) {
      throw new AssertionError(e);
    }
  }

  static byte[] bytes(ObjectNode n) {
    return n.toString().getBytes(StandardCharsets.UTF_8);
  }

  /** Sends the values in order; returns each one's Kafka position as dead letters name it. */
  static List<String> produce(EmbeddedKafkaBroker broker, String topic, List<byte[]> values)
      throws Exception {
    List<String> at = new ArrayList<>();
    try (var p =
        new KafkaProducer<byte[], byte[]>(
            Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                broker.bootstrapServers(),
                ProducerConfig.MAX_REQUEST_SIZE_CONFIG,
                1_000_000,
                ProducerConfig.LINGER_MS_CONFIG,
                5),
            new ByteArraySerializer(),
            new ByteArraySerializer())) {
      List<java.util.concurrent.Future<RecordMetadata>> sent = new ArrayList<>();
      for (byte[] v : values) {
        sent.add(p.send(new ProducerRecord<>(topic, null, v)));
      }
      for (var f : sent) {
        RecordMetadata m = f.get();
        at.add(m.topic() + "/" + m.partition() + "@" + m.offset());
      }
    }
    return at;
  }

  static List<DeadLetter> deadLetters(
      EmbeddedKafkaBroker broker, Predicate<List<DeadLetter>> done, Duration timeout) {
    List<DeadLetter> out = new ArrayList<>();
    for (byte[] b :
        TopicReader.readUntil(
            broker.bootstrapServers(),
            Topics.DEAD_LETTER,
            got -> done.test(got.stream().map(ShapesJob::deadLetter).toList()),
            Duration.ofSeconds(3),
            timeout,
            true)) {
      out.add(deadLetter(b));
    }
    return out;
  }

  static List<Incident> incidents(
      EmbeddedKafkaBroker broker, Predicate<List<Incident>> done, Duration timeout) {
    List<Incident> out = new ArrayList<>();
    for (byte[] b :
        TopicReader.readUntil(
            broker.bootstrapServers(),
            Topics.INCIDENTS,
            got -> done.test(got.stream().map(ShapesJob::incident).toList()),
            Duration.ofSeconds(2),
            timeout,
            true)) {
      out.add(incident(b));
    }
    return out;
  }

  private static DeadLetter deadLetter(byte[] b) {
    try {
      return WireJson.read(b, DeadLetter.class);
    } catch (WireFormatException e) {
      throw new AssertionError(e);
    }
  }

  private static Incident incident(byte[] b) {
    try {
      return WireJson.readIncident(b);
    } catch (WireFormatException e) {
      throw new AssertionError(e);
    }
  }

  /**
   * The job's restarts so far: the failures in its exception history, each of which restarts it
   * (read through the MiniCluster's REST API as an operator would); the job is still running.
   */
  static long restarts(MiniClusterExtension flink, JobClient job) throws Exception {
    assertEquals(
        org.apache.flink.api.common.JobStatus.RUNNING, job.getJobStatus().get(), "the job runs on");
    JsonNode got = WireJson.mapper().readTree(rest(flink, job, "/exceptions"));
    assertEquals(null, got.get("errors"), "the REST API answered: " + got);
    JsonNode entries = got.at("/exceptionHistory/entries");
    return entries.isArray() ? entries.size() : 0; // no history yet: nothing failed
  }

  private static String rest(MiniClusterExtension flink, JobClient job, String path)
      throws Exception {
    Configuration c = flink.getClientConfiguration();
    URI uri =
        URI.create(
            "http://"
                + c.get(RestOptions.ADDRESS)
                + ":"
                + c.get(RestOptions.PORT)
                + "/jobs/"
                + job.getJobID()
                + path);
    return HttpClient.newHttpClient()
        .send(HttpRequest.newBuilder(uri).build(), BodyHandlers.ofString())
        .body();
  }

  /** The job's status and latest failures as its REST API reports them, for messages. */
  static String failures(MiniClusterExtension flink, JobClient job) {
    try {
      String body = rest(flink, job, "/exceptions?maxExceptions=3");
      StringBuilder causes = new StringBuilder(job.getJobStatus().get().toString());
      var m = java.util.regex.Pattern.compile("Caused by: [^\\\\]{0,400}").matcher(body);
      while (m.find()) {
        causes.append(" | ").append(m.group());
      }
      return causes + " | " + body.substring(0, Math.min(1000, body.length()));
    } catch (Exception e) {
      return "unknown: " + e;
    }
  }

  /** The sum of one counter over an operator's subtasks. */
  static long counter(InMemoryReporter reporter, JobID job, String operator, String name) {
    long sum = 0;
    for (Map.Entry<String, Metric> e : reporter.findMetrics(job, name).entrySet()) {
      if (e.getKey().contains("." + operator + ".") && e.getValue() instanceof Counter c) {
        sum += c.getCount();
      }
    }
    return sum;
  }

  static final String DEAD_LETTERS = PoisonGuard.DEAD_LETTER_METRIC;
  static final String POISON = PoisonGuard.POISON_METRIC;
}
