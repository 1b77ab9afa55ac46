package dev.cudawatch.processor.formats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.wire.DeadLetter;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.kafka.embedded.KafkaBrokerExtension;
import dev.cudawatch.processor.formats.RecordFuzzer.Mutant;
import dev.cudawatch.processor.formats.ShipperShapes.Line;
import dev.cudawatch.processor.formats.ShipperShapes.Shape;
import dev.cudawatch.processor.functions.ParseLogRecords;
import dev.cudawatch.processor.records.RawRecord;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Every input format fuzzed through the real job (MiniCluster, real broker): {@code fuzz.records}
 * records a format (default 1000) made bad by {@link RecordFuzzer} from seed {@code fuzz.seed}
 * (default 29; printed, and in every failure), with a good record carrying a known failure line
 * after every 40. The job never restarts; every record the job cannot read is dead-lettered exactly
 * once (which ones: {@link ParseLogRecords} run beside the job on the same bytes, and every
 * truncated JSON record among them); every good record's incident arrives.
 *
 * <p>Longer: {@code -Dfuzz.records=20000 -Dfuzz.seed=$RANDOM}.
 */
class FuzzFormatsIT {
  static final InMemoryReporter REPORTER = InMemoryReporter.createWithRetainedMetrics();

  @RegisterExtension static final MiniClusterExtension FLINK = ShapesJob.miniCluster(REPORTER);

  static final long SEED = Long.getLong("fuzz.seed", 29L);
  static final int RECORDS = Integer.getInteger("fuzz.records", 1000);
  static final int GOOD_EVERY = 40;

  @RegisterExtension static final KafkaBrokerExtension BROKER = new KafkaBrokerExtension();

  @BeforeAll
  static void start() throws Exception {
    ShapesJob.createTopics(BROKER.broker());
  }

  @Test
  void noRecordStopsTheJobLosesAGoodIncidentOrIsDeadLetteredTwice() throws Exception {
    String seed = "fuzz.seed=" + SEED + " fuzz.records=" + RECORDS;
    System.out.println("FuzzFormatsIT " + seed + " formats=" + Shape.values().length);
    RecordFuzzer fuzzer = new RecordFuzzer(SEED);
    Set<String> unreadable = new HashSet<>(); // Kafka positions the parser dead-letters
    Set<String> goodStreams = new HashSet<>();
    Map<String, String> how = new HashMap<>();
    Map<Shape, int[]> perShape = new LinkedHashMap<>(); // {sent, unreadable}
    JobClient job = ShapesJob.start(BROKER.broker(), "fuzz-it");
    try {
      for (Shape shape : Shape.values()) {
        List<byte[]> values = new ArrayList<>();
        List<String> labels = new ArrayList<>();
        List<Boolean> surelyBad = new ArrayList<>();
        for (int i = 0; i < RECORDS; i++) {
          if (i % GOOD_EVERY == GOOD_EVERY - 1) {
            String stream = "good-" + shape.name().toLowerCase() + "-" + i + "g";
            goodStreams.add(stream);
            values.add(ShapesJob.good(shape, stream, i));
            labels.add("good " + stream);
            surelyBad.add(false);
          } else {
            // bases vary in stream and offset, so readable mutants spread over streams
            byte[] base =
                shape
                    .records(
                        List.of(
                            new Line(
                                null,
                                "fuzz-" + (i % 17),
                                i * 100L,
                                ShapesJob.T0.plusMillis(i),
                                ShapesJob.FAILURE)))
                    .get(0);
            Mutant m = fuzzer.mutate(shape, base);
            values.add(m.value());
            labels.add(m.how());
            surelyBad.add(m.surelyBad());
          }
        }
        List<Boolean> deadAtParse = parse(shape, values);
        List<String> at = ShapesJob.produce(BROKER.broker(), ShapesJob.topic(shape), values);
        int dead = 0;
        for (int i = 0; i < values.size(); i++) {
          how.put(at.get(i), shape + " #" + i + ": " + labels.get(i));
          if (deadAtParse.get(i)) {
            unreadable.add(at.get(i));
            dead++;
          } else {
            assertTrue(!surelyBad.get(i), seed + ": read, yet surely bad: " + how.get(at.get(i)));
          }
        }
        perShape.put(shape, new int[] {values.size(), dead});
      }
      System.out.println("FuzzFormatsIT sent/unreadable per format: " + summary(perShape));

      List<Incident> incidents =
          ShapesJob.incidents(
              BROKER.broker(),
              got -> streams(got).containsAll(goodStreams),
              Duration.ofSeconds(120));
      Set<String> missing = new HashSet<>(goodStreams);
      missing.removeAll(streams(incidents));
      assertEquals(
          Set.of(),
          missing,
          seed + ": every good record's incident; job: " + ShapesJob.failures(FLINK, job));

      List<DeadLetter> letters =
          ShapesJob.deadLetters(
              BROKER.broker(),
              got ->
                  got.stream()
                      .map(DeadLetter::topic)
                      .collect(Collectors.toSet())
                      .containsAll(unreadable),
              Duration.ofSeconds(120));
      Map<String, Long> parsed =
          letters.stream()
              .filter(d -> d.stage().equals("processor"))
              .collect(Collectors.groupingBy(DeadLetter::topic, Collectors.counting()));
      List<String> twice =
          parsed.entrySet().stream()
              .filter(e -> e.getValue() > 1)
              .map(e -> how.get(e.getKey()))
              .toList();
      assertEquals(List.of(), twice, seed + ": dead-lettered more than once");
      Set<String> notDead = new HashSet<>(unreadable);
      notDead.removeAll(parsed.keySet());
      assertEquals(
          List.of(), notDead.stream().map(how::get).toList(), seed + ": unreadable, not dead");
      Set<String> extra = new HashSet<>(parsed.keySet());
      extra.removeAll(unreadable);
      assertEquals(List.of(), extra.stream().map(how::get).toList(), seed + ": dead, readable");
      List<DeadLetter> later =
          letters.stream().filter(d -> !d.stage().equals("processor")).toList();
      System.out.println("FuzzFormatsIT failures past parsing, dead-lettered: " + later);
      assertEquals(
          later.size(),
          later.stream().map(d -> d.stage() + d.topic()).distinct().count(),
          seed + ": later dead letters once each");
      assertEquals(
          0,
          ShapesJob.restarts(FLINK, job),
          seed + ": the job never restarted; " + ShapesJob.failures(FLINK, job));
      assertEquals(
          unreadable.size(),
          ShapesJob.counter(REPORTER, job.getJobID(), "parse-records", ShapesJob.DEAD_LETTERS),
          seed + ": counted");
    } finally {
      job.cancel().get();
    }
  }

  /** Which values the job's own parser dead-letters, run here on the same bytes. */
  private static List<Boolean> parse(Shape shape, List<byte[]> values) throws Exception {
    String topic = ShapesJob.topic(shape);
    List<Boolean> dead = new ArrayList<>();
    try (OneInputStreamOperatorTestHarness<RawRecord, LogRecord> h =
        ProcessFunctionTestHarnesses.forProcessFunction(
            new ParseLogRecords(
                List.of(new InputSettings(topic, shape.format, ShipperShapes.JOB_PATTERN))))) {
      int before = 0;
      for (int i = 0; i < values.size(); i++) {
        h.processElement(new RawRecord(topic, 0, i, values.get(i)), 0);
        var side = h.getSideOutput(ParseLogRecords.DEAD_LETTERS);
        int now = side == null ? 0 : side.size();
        dead.add(now > before);
        before = now;
      }
    }
    return dead;
  }

  private static final java.util.regex.Pattern GOOD =
      java.util.regex.Pattern.compile("good-[a-z_]+-\\d+g");

  /** The good streams these incidents of the known failure came from. */
  private static Set<String> streams(List<Incident> incidents) {
    Set<String> out = new HashSet<>();
    for (Incident i : incidents) {
      if (i.source() != null && ShapesJob.FAILURE_CLASS.equals(i.incidentClass())) {
        var m = GOOD.matcher(i.source());
        if (m.find()) {
          out.add(m.group());
        }
      }
    }
    return out;
  }

  private static String summary(Map<Shape, int[]> perShape) {
    return perShape.entrySet().stream()
        .map(e -> e.getKey() + " " + e.getValue()[0] + "/" + e.getValue()[1])
        .collect(Collectors.joining(", "));
  }
}
