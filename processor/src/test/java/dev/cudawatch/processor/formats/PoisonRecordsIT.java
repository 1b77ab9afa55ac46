package dev.cudawatch.processor.formats;

import static dev.cudawatch.processor.formats.ShapesJob.bytes;
import static dev.cudawatch.processor.formats.ShapesJob.good;
import static dev.cudawatch.processor.formats.ShapesJob.tree;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cudawatch.common.wire.DeadLetter;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.kafka.embedded.KafkaBrokerExtension;
import dev.cudawatch.processor.formats.ShipperShapes.Shape;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.logs.v1.LogsData;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * One poison record per way each format can carry an impossible value (the Fluent Bit {@code 1e17}
 * epoch-seconds timestamp that used to fail the task forever among them), each carrying a failure
 * line so it would reach the time-based operators, then a good record: on the real job, with a real
 * broker, every poison record is dead-lettered once with its reason and counted, the job never
 * restarts, and the good record's incident arrives.
 */
class PoisonRecordsIT {
  static final InMemoryReporter REPORTER = InMemoryReporter.createWithRetainedMetrics();

  @RegisterExtension static final MiniClusterExtension FLINK = ShapesJob.miniCluster(REPORTER);

  @RegisterExtension static final KafkaBrokerExtension BROKER = new KafkaBrokerExtension();
  static JobClient job;

  @BeforeAll
  static void start() throws Exception {
    ShapesJob.createTopics(BROKER.broker());
  }

  @AfterAll
  static void stop() throws Exception {
    if (job != null) {
      job.cancel().get();
    }
  }

  /** The bad records of a shape, each derived from a good record with the failure line. */
  static List<byte[]> poison(Shape shape) throws Exception {
    byte[] base = good(shape, "poison", 0);
    String farFuture = "+200000000-01-01T00:00:00Z"; // parses, but its epoch millis overflow
    List<byte[]> out = new ArrayList<>();
    switch (shape) {
      case CUDAWATCH -> {
        out.add(with(base, "event_time", 1e17));
        out.add(with(base, "event_time", farFuture));
        out.add(with(base, "offset", -1));
        out.add(with(base, "gpu", 1 << 30));
      }
      case FLUENT_BIT -> {
        out.add(with(base, "@timestamp", 1e17)); // the reported bug
        out.add(with(base, "@timestamp", -1e17));
        out.add(with(base, "@timestamp", farFuture));
        out.add(with(base, "offset", -5));
      }
      case VECTOR -> {
        out.add(with(base, "timestamp", farFuture));
        out.add(with(base, "timestamp", 1e17));
      }
      case FILEBEAT -> {
        out.add(with(base, "@timestamp", 1e17));
        out.add(with(base, "@timestamp", "-200000000-01-01T00:00:00Z"));
      }
      case OTLP_JSON -> {
        ObjectNode t = tree(base);
        ObjectNode rec = (ObjectNode) t.at("/resourceLogs/0/scopeLogs/0/logRecords/0");
        rec.put("timeUnixNano", "1e17");
        out.add(bytes(t));
        out.add(
            new String(base, java.nio.charset.StandardCharsets.UTF_8)
                .replace("\"3\"", "\"999999999\"") // a rank no job has
                .getBytes(java.nio.charset.StandardCharsets.UTF_8));
      }
      case OTLP_PROTO -> {
        LogsData.Builder b = LogsData.parseFrom(base).toBuilder();
        b.getResourceLogsBuilder(0)
            .getResourceBuilder()
            .addAttributes(
                KeyValue.newBuilder()
                    .setKey("k8s.pod.labels.batch.kubernetes.io/job-completion-index")
                    .setValue(AnyValue.newBuilder().setStringValue("999999999")));
        out.add(b.build().toByteArray());
        out.add(Arrays.copyOf(base, base.length / 2)); // cut short
      }
      case RSYSLOG -> {
        out.add(with(base, "timestamp", "+200000000-01-01T00:00:00+01:00"));
        out.add(with(base, "timestamp", 1e17));
        out.add(with(base, "fileoffset", "-4"));
      }
    }
    return out;
  }

  private static byte[] with(byte[] base, String field, Object value) {
    ObjectNode t = tree(base);
    if (value instanceof Double d) {
      t.put(field, d);
    } else if (value instanceof Integer i) {
      t.put(field, i);
    } else {
      t.put(field, (String) value);
    }
    return bytes(t);
  }

  @ParameterizedTest
  @EnumSource(Shape.class)
  void poisonIsDeadLetteredOnceAndTheNextGoodRecordStillYieldsItsIncident(Shape shape)
      throws Exception {
    if (job == null) { // on the extension's MiniCluster, which its per-test context selects
      job = ShapesJob.start(BROKER.broker(), "poison-it");
    }
    List<byte[]> bad = poison(shape);
    String stream = "after-poison-" + shape.name().toLowerCase();
    List<byte[]> values = new ArrayList<>(bad);
    values.add(good(shape, stream, 1));
    List<String> at = ShapesJob.produce(BROKER.broker(), ShapesJob.topic(shape), values);
    List<String> badAt = at.subList(0, bad.size());

    List<Incident> incidents =
        ShapesJob.incidents(
            BROKER.broker(),
            got -> got.stream().anyMatch(i -> mine(i, stream)),
            Duration.ofSeconds(90));
    List<Incident> mine = incidents.stream().filter(i -> mine(i, stream)).toList();
    assertEquals(1, mine.size(), shape + ": the good record's one incident: " + mine);
    assertEquals(ShapesJob.FAILURE_CLASS, mine.get(0).incidentClass());

    List<DeadLetter> letters =
        ShapesJob.deadLetters(
            BROKER.broker(),
            got ->
                got.stream().map(DeadLetter::topic).collect(Collectors.toSet()).containsAll(badAt),
            Duration.ofSeconds(60));
    for (String p : badAt) {
      List<DeadLetter> forIt = letters.stream().filter(d -> d.topic().equals(p)).toList();
      assertEquals(1, forIt.size(), shape + ": " + p + " dead-lettered once: " + forIt);
      assertEquals("processor", forIt.get(0).stage(), shape + "");
      assertTrue(!forIt.get(0).reason().isBlank(), shape + ": a reason");
    }
    assertEquals(
        List.of(),
        letters.stream().filter(d -> !d.stage().equals("processor")).toList(),
        shape + ": no record got past parsing to fail later");
    assertEquals(0, ShapesJob.restarts(FLINK, job), shape + ": the job never restarted");
    assertTrue(
        ShapesJob.counter(REPORTER, job.getJobID(), "parse-records", ShapesJob.DEAD_LETTERS)
            >= bad.size(),
        shape + ": counted");
  }

  private static boolean mine(Incident i, String stream) {
    return i.source() != null
        && i.source().contains(stream)
        && ShapesJob.FAILURE_CLASS.equals(i.incidentClass());
  }
}
