package dev.cudawatch.bench;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cudawatch.common.Topics;
import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.kafka.embedded.EmbeddedKafkaBroker;
import dev.cudawatch.processor.jobs.GroupJobFailures;
import dev.cudawatch.simulator.KafkaOutput;
import dev.cudawatch.simulator.SimLine;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.apache.flink.core.execution.JobClient;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The culprit rank on the real multi-GPU recordings, through the pipeline (Kafka, the Flink job at
 * parallelism 2 with exactly-once sinks): each recording's console output is shipped as one job's
 * stream, all at once, and the bench waits for that job's {@code JobFailure} alert. Reports per
 * recording the rank the alert names against the truth (right, wrong, unknown) and the wall time
 * from shipping the recording's first failing line to the committed alert. Usage: CulpritBench
 * WORKDIR REPORT.md [RECORDINGS_DIR].
 */
public final class CulpritBench {
  private CulpritBench() {}

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    Path report = Path.of(args[1]);
    Path recordings = Path.of(args.length > 2 ? args[2] : "diagnosis/src/test/resources/multigpu");
    Files.createDirectories(dir);
    List<Path> cases;
    try (Stream<Path> s = Files.list(recordings)) {
      cases =
          s.filter(d -> Files.isRegularFile(d.resolve("truth.json")))
              .filter(d -> Files.isRegularFile(d.resolve("console.log")))
              .sorted()
              .toList();
    }
    StringBuilder md =
        new StringBuilder(
            "| recording | truth | the JobFailure alert names | outcome | first failing line →"
                + " alert, ms |\n|---|---|---|---|---:|\n");
    int right = 0;
    int wrong = 0;
    int unknown = 0;
    List<Long> latencies = new ArrayList<>();
    try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start(dir.resolve("kafka"))) {
      broker.createTopics(Topics.ALL, 2);
      JobClient job = BenchJob.start(broker.bootstrapServers(), "culprit", null);
      try (KafkaConsumer<byte[], byte[]> alerts = alertsConsumer(broker)) {
        long seed = 1;
        Instant t0 = Instant.now().minus(Duration.ofHours(1));
        for (Path c : cases) {
          JsonNode truth = WireJson.mapper().readTree(c.resolve("truth.json").toFile());
          boolean failed = truth.path("failed").asBoolean(true);
          String want = failed ? truth.path("culprit_ranks").toString() : "no failure";
          String name = "rec-" + c.getFileName();
          List<String> lines = Files.readAllLines(c.resolve("console.log"));
          long sentFirstFailure;
          try (KafkaOutput out = new KafkaOutput(broker.bootstrapServers(), seed++)) {
            sentFirstFailure = 0;
            for (int k = 0; k < lines.size(); k++) {
              if (sentFirstFailure == 0 && failing(lines.get(k))) {
                sentFirstFailure = System.nanoTime();
              }
              out.accept(
                  new SimLine(
                      t0.plusMillis(k).toEpochMilli(),
                      "h200-node",
                      name,
                      null,
                      null,
                      RecordKind.LOG,
                      "/logs/" + name + "/console.log",
                      lines.get(k)));
            }
          }
          t0 = t0.plus(Duration.ofMinutes(1)); // each job's lines after the last job's
          Alert a = failed ? awaitAlert(alerts, name, Duration.ofSeconds(60)) : null;
          long ms =
              a == null || sentFirstFailure == 0
                  ? -1
                  : (System.nanoTime() - sentFirstFailure) / 1_000_000;
          String got;
          String outcome;
          if (!failed) {
            Alert none = awaitAlert(alerts, name, Duration.ofSeconds(10));
            got = none == null ? "no alert" : "rank " + none.annotations().get("root_rank");
            outcome = none == null ? "right" : "wrong";
          } else if (a == null || "unknown".equals(a.annotations().get("root_rank"))) {
            got = a == null ? "no alert" : "rank unknown";
            outcome = "unknown";
          } else {
            got =
                "rank "
                    + a.annotations().get("root_rank")
                    + ", GPU "
                    + a.annotations().get("root_gpu")
                    + " ("
                    + a.annotations()
                        .getOrDefault("culprit_cause", a.annotations().get("root_class"))
                    + ")";
            outcome = want.equals("[" + a.annotations().get("root_rank") + "]") ? "right" : "wrong";
          }
          right += outcome.equals("right") ? 1 : 0;
          wrong += outcome.equals("wrong") ? 1 : 0;
          unknown += outcome.equals("unknown") ? 1 : 0;
          if (ms >= 0) {
            latencies.add(ms);
          }
          md.append("| ")
              .append(c.getFileName())
              .append(" | ")
              .append(failed ? "rank " + want + " (" + truth.path("case").asText() + ")" : want)
              .append(" | ")
              .append(got)
              .append(" | ")
              .append(outcome)
              .append(" | ")
              .append(ms < 0 ? "" : String.valueOf(ms))
              .append(" |\n");
        }
      }
      job.cancel().get();
    }
    latencies.sort(Long::compare);
    md.append("\nright ")
        .append(right)
        .append(", wrong ")
        .append(wrong)
        .append(", unknown ")
        .append(unknown)
        .append(" of ")
        .append(cases.size())
        .append(" recordings; first failing line → alert: median ")
        .append(latencies.isEmpty() ? "-" : latencies.get(latencies.size() / 2))
        .append(" ms, max ")
        .append(latencies.isEmpty() ? "-" : latencies.get(latencies.size() - 1))
        .append(" ms\n");
    Files.writeString(report, md);
    System.out.print(md);
    System.exit(0);
  }

  /** A line of the kinds a job's failure starts with. */
  private static boolean failing(String l) {
    return l.contains("Watchdog caught")
        || l.contains("Received a dump signal")
        || l.contains("device-side assert")
        || l.contains("Assertion `")
        || l.contains("OutOfMemoryError")
        || l.contains("exitcode  : -9");
  }

  private static KafkaConsumer<byte[], byte[]> alertsConsumer(EmbeddedKafkaBroker broker) {
    KafkaConsumer<byte[], byte[]> c =
        new KafkaConsumer<>(
            Map.of(
                "bootstrap.servers", broker.bootstrapServers(),
                "group.id", "culprit-bench",
                "isolation.level", "read_committed",
                "auto.offset.reset", "earliest"),
            new ByteArrayDeserializer(),
            new ByteArrayDeserializer());
    c.subscribe(List.of(Topics.ALERTS));
    return c;
  }

  private static final Map<String, Alert> SEEN = new TreeMap<>();

  /** The job's latest JobFailure alert once one is committed, or null after {@code wait}. */
  private static Alert awaitAlert(KafkaConsumer<byte[], byte[]> c, String job, Duration wait)
      throws Exception {
    long deadline = System.nanoTime() + wait.toNanos();
    while (System.nanoTime() < deadline) {
      if (SEEN.containsKey(job)) {
        return SEEN.get(job);
      }
      for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(50))) {
        Alert a = WireJson.readAlert(r.value());
        if (a.alertName().equals(GroupJobFailures.ALERT_NAME)) {
          SEEN.putIfAbsent(a.labels().get("job"), a);
        }
      }
    }
    return SEEN.get(job);
  }
}
