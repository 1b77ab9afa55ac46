package dev.cudawatch.bench;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cudawatch.common.Topics;
import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.JobFailure;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.kafka.embedded.EmbeddedKafkaBroker;
import dev.cudawatch.kafka.embedded.TopicReader;
import dev.cudawatch.simulator.DistributedJobFailure;
import dev.cudawatch.simulator.JobPlacement;
import dev.cudawatch.simulator.KafkaOutput;
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
      // distributed jobs first, half an hour of event time before the fleet, so the fleet's
      // time closes their sessions
      List<DistributedJobFailure> jobs = new ArrayList<>();
      long jobStart =
          Instant.now().minusSeconds(seconds).minus(Duration.ofMinutes(45)).toEpochMilli();
      try (KafkaOutput out = new KafkaOutput(broker.bootstrapServers(), 4242)) {
        for (Object[] d : DISTRIBUTED) {
          DistributedJobFailure sim =
              new DistributedJobFailure(
                  new JobPlacement(
                      (String) d[0],
                      (JobPlacement.Launch) d[1],
                      List.of("gpu-dist-01", "gpu-dist-02"),
                      (Integer) d[2]),
                  (Integer) d[3],
                  (String) d[4],
                  jobStart,
                  30_000,
                  7 + jobs.size());
          sim.run(out);
          jobs.add(sim);
          jobStart += Duration.ofMinutes(3).toMillis();
        }
      }
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
      List<JobFailure> failures = new ArrayList<>();
      for (byte[] b : read(broker, Topics.JOB_FAILURES)) {
        failures.add(WireJson.read(b, JobFailure.class));
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
      md += "\n" + rankReport(failures);
      Files.writeString(report, md);
      System.out.print(md);
    }
    System.exit(0);
  }

  /** Simulated distributed jobs: name, launch, GPUs per host (two hosts), failing rank, class. */
  static final Object[][] DISTRIBUTED = {
    {"dist-ima", JobPlacement.Launch.TORCHRUN, 8, 11, "illegal_memory_access"},
    {"dist-oom", JobPlacement.Launch.TORCHRUN_PREFIXED, 4, 3, "cuda_oom"},
    {"dist-assert", JobPlacement.Launch.SRUN_GPU_PER_TASK, 4, 6, "device_assert"},
    {"dist-launch", JobPlacement.Launch.TORCHRUN, 8, 0, "kernel_exception"},
  };

  /** Rank and GPU attribution of each simulated distributed job's one job-failure record. */
  static String rankReport(List<JobFailure> failures) {
    StringBuilder md =
        new StringBuilder(
            "## Culprit rank of simulated distributed jobs (two hosts, every rank times out after"
                + " the failing one)\n\n| job | truth | job-failure record | rank | GPU |\n"
                + "|---|---|---|---|---|\n");
    int right = 0;
    int wrong = 0;
    int unknown = 0;
    for (Object[] d : DISTRIBUTED) {
      int gpusPerHost = (Integer) d[2];
      int rank = (Integer) d[3];
      JobPlacement.Slot slot =
          new JobPlacement(
                  (String) d[0], (JobPlacement.Launch) d[1], List.of("a", "b"), gpusPerHost)
              .slot(rank);
      List<JobFailure> mine = failures.stream().filter(f -> f.job().equals(d[0])).toList();
      JobFailure f = mine.isEmpty() ? null : mine.get(mine.size() - 1);
      String r = f == null || f.rank() == null ? "unknown" : f.rank() == rank ? "right" : "wrong";
      String g =
          f == null || f.gpu() == null
              ? "unknown"
              : f.gpu().equals(String.valueOf(slot.gpu())) ? "right" : "wrong";
      right += r.equals("right") ? 1 : 0;
      wrong += r.equals("wrong") ? 1 : 0;
      unknown += r.equals("unknown") ? 1 : 0;
      md.append("| ")
          .append(d[0])
          .append(" | rank ")
          .append(rank)
          .append(" GPU ")
          .append(slot.gpu())
          .append(" (")
          .append(d[4])
          .append(") | ")
          .append(
              f == null
                  ? "none"
                  : mine.size()
                      + " record(s): rank "
                      + f.rank()
                      + " GPU "
                      + f.gpu()
                      + " "
                      + f.rootClass()
                      + " ("
                      + f.cause()
                      + ")")
          .append(" | ")
          .append(r)
          .append(" | ")
          .append(g)
          .append(" |\n");
    }
    md.append("\nranks: right ")
        .append(right)
        .append(", wrong ")
        .append(wrong)
        .append(", unknown ")
        .append(unknown)
        .append(" of ")
        .append(DISTRIBUTED.length)
        .append("\n");
    return md.toString();
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
