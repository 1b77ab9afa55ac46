package dev.cudawatch.bench;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cudawatch.common.Topics;
import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.kafka.embedded.EmbeddedKafkaBroker;
import dev.cudawatch.kafka.embedded.TopicReader;
import dev.cudawatch.simulator.SimulateMain;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.core.execution.JobClient;
import picocli.CommandLine;

/**
 * Accuracy against the simulator's ground truth: the simulated fleet goes into Kafka, the Flink job
 * (parallelism 2) diagnoses it, and its incidents and alerts are compared with what was injected,
 * per class and per rule. Writes a Markdown table to the given file.
 */
public final class AccuracyBench {
  /** Rules the simulator injects scenarios for; other rules' alerts are listed, not scored. */
  static final List<String> SCORED_RULES =
      List.of("LemonGpu", "CodeBug", "GpuMemoryLeak", "RepeatedIllegalMemoryAccess");

  private AccuracyBench() {}

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    Path report = Path.of(args[1]);
    int seconds = args.length > 2 ? Integer.parseInt(args[2]) : 330;
    Files.createDirectories(dir);
    try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start(dir.resolve("kafka"))) {
      broker.createTopics(Topics.ALL, 2);
      JobClient job = BenchJob.start(broker.bootstrapServers(), "accuracy", null);
      Path truth = dir.resolve("truth.jsonl");
      int code =
          new CommandLine(new SimulateMain())
              .execute(
                  "--bootstrap-servers", broker.bootstrapServers(),
                  "--hosts", "4",
                  "--seconds", String.valueOf(seconds),
                  "--rate", "2000",
                  "--seed", "42",
                  "--start", Instant.now().minusSeconds(seconds).toString(),
                  "--truth", truth.toString());
      if (code != 0) {
        throw new IllegalStateException("simulate exited with " + code);
      }
      List<Incident> incidents = new ArrayList<>();
      for (byte[] b : read(broker, Topics.INCIDENTS)) {
        incidents.add(WireJson.readIncident(b));
      }
      List<Alert> alerts = new ArrayList<>();
      for (byte[] b : read(broker, Topics.ALERTS)) {
        alerts.add(WireJson.readAlert(b));
      }
      job.cancel().get();
      List<JsonNode> expected = new ArrayList<>();
      for (String l : Files.readAllLines(truth)) {
        expected.add(WireJson.mapper().readTree(l));
      }
      String md =
          Scoring.report(expected, incidents, alerts, SCORED_RULES)
              + "\n"
              + HealthScoring.report(expected, incidents, alerts);
      Files.writeString(report, md);
      System.out.print(md);
    }
    System.exit(0);
  }

  /** Everything committed, once the topic has been quiet for 15 s (the job has caught up). */
  private static List<byte[]> read(EmbeddedKafkaBroker broker, String topic) {
    return TopicReader.readUntil(
        broker.bootstrapServers(),
        topic,
        got -> !got.isEmpty(),
        Duration.ofSeconds(15),
        Duration.ofMinutes(10),
        true);
  }
}
