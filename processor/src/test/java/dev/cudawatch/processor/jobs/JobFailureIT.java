package dev.cudawatch.processor.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.Topics;
import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.JobFailure;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.common.wire.WireFormatException;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.kafka.embedded.KafkaBrokerExtension;
import dev.cudawatch.kafka.embedded.TopicReader;
import dev.cudawatch.processor.ProcessorMain;
import dev.cudawatch.processor.config.ProcessorSettings;
import dev.cudawatch.simulator.DistributedJobFailure;
import dev.cudawatch.simulator.JobPlacement;
import dev.cudawatch.simulator.KafkaOutput;
import dev.cudawatch.simulator.SimLine;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The simulator's 16-rank job on two hosts, through the real pipeline (MiniCluster, parallelism 2,
 * real broker): rank 11 hits an illegal memory access, the other 15 ranks time out in NCCL ten
 * minutes later. Each rank runs under `cudawatch run`, so the agent knows job, rank and GPU from
 * its environment while the traceback names no GPU. One job-failure record and one alert name rank
 * 11, its host and GPU, with the 15 timeouts as consequences; no rank pages on its own.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class) // one broker: later tests' times are later
class JobFailureIT {
  @RegisterExtension
  static final MiniClusterExtension FLINK =
      new MiniClusterExtension(
          new MiniClusterResourceConfiguration.Builder()
              .setNumberTaskManagers(1)
              .setNumberSlotsPerTaskManager(2)
              .build());

  private static final Instant T0 = Instant.parse("2026-11-22T03:00:00Z");
  private static final String JOB = "train-77";

  @RegisterExtension
  static final KafkaBrokerExtension BROKER = new KafkaBrokerExtension(Topics.ALL, 2);

  @Test
  @Order(1)
  void sixteenRanksTwoHostsOneJobFailureNamingRank11() throws Exception {
    JobPlacement placement =
        new JobPlacement(
            JOB, JobPlacement.Launch.TORCHRUN, List.of("gpu-node-01", "gpu-node-02"), 8);
    DistributedJobFailure sim =
        new DistributedJobFailure(
            placement, 11, "illegal_memory_access", T0.toEpochMilli(), 60_000, 14);
    JobClient job = startJob();
    try {
      try (KafkaOutput out = new KafkaOutput(BROKER.bootstrapServers(), 14)) {
        sim.run(out);
      }
      // the job's 16 incidents are committed, so the grouping operator has seen them all
      List<Incident> incidents =
          read(
              Topics.INCIDENTS,
              got -> ofJob(got).size() >= 16,
              JobFailureIT::incident,
              Duration.ofSeconds(3));
      List<Incident> ours = ofJob(incidents);
      assertEquals(16, ours.size(), "one incident per rank: " + ours);
      Incident root =
          ours.stream()
              .filter(i -> i.incidentClass().equals("illegal_memory_access"))
              .findFirst()
              .orElseThrow();
      assertEquals("gpu-node-02", root.host());
      assertEquals(11L, ((Number) root.fields().get("rank")).longValue());
      assertEquals(3L, ((Number) root.fields().get("gpu")).longValue());
      assertEquals(15, ours.stream().filter(i -> i.incidentClass().equals("nccl_timeout")).count());

      // the fleet's event time moves on: a host OOM on another node half an hour later closes
      // the job's session (15 minutes without an incident of the job)
      laterKernelLineElsewhere(T0.plus(Duration.ofMinutes(40)), 15);
      List<JobFailure> failures = new ArrayList<>();
      for (byte[] b :
          TopicReader.readAll(
              BROKER.bootstrapServers(),
              Topics.JOB_FAILURES,
              1,
              Duration.ofSeconds(5),
              Duration.ofSeconds(120),
              true)) {
        JobFailure f = WireJson.read(b, JobFailure.class);
        if (f.job().equals(JOB)) {
          failures.add(f);
        }
      }
      assertEquals(1, failures.size(), "one record for the failed job: " + failures);
      JobFailure f = failures.get(0);
      assertEquals("illegal_memory_access", f.rootClass());
      assertEquals(11, f.rank());
      assertEquals("gpu-node-02", f.host());
      assertEquals("3", f.gpu());
      assertEquals(root.id(), f.rootId());
      assertEquals(15, f.consequenceCount());
      assertEquals(15, f.consequences().size());
      assertEquals(List.of("gpu-node-01", "gpu-node-02"), f.hosts());
      assertEquals(16, f.ranks());
      Set<String> timeouts = new TreeSet<>();
      ours.stream()
          .filter(i -> i.incidentClass().equals("nccl_timeout"))
          .forEach(i -> timeouts.add(i.id()));
      assertEquals(timeouts, new TreeSet<>(f.consequences()), "the timeouts point at the root");

      List<Alert> alerts =
          read(
              Topics.ALERTS,
              got ->
                  jobFailureAlerts(got).stream()
                      .anyMatch(a -> "15".equals(a.annotations().get("consequences"))),
              JobFailureIT::alert,
              Duration.ofSeconds(5));
      List<Alert> jobAlerts = jobFailureAlerts(alerts);
      assertEquals(
          1,
          jobAlerts.stream().map(Alert::fingerprint).distinct().count(),
          "one alert for the job (raised, then updated with its consequences): " + jobAlerts);
      for (Alert a : jobAlerts) {
        assertEquals(Alert.State.FIRING, a.state());
        assertEquals("11", a.annotations().get("root_rank"));
        assertEquals("gpu-node-02", a.annotations().get("root_host"));
        assertEquals("3", a.annotations().get("root_gpu"));
      }
      Alert last = jobAlerts.get(jobAlerts.size() - 1);
      assertEquals("15", last.annotations().get("consequences"));
      assertTrue(
          last.annotations().get("summary").contains("rank 11 on gpu-node-02 GPU 3"),
          last.annotations().get("summary"));
      assertTrue(
          alerts.stream()
              .noneMatch(
                  a -> a.alertName().equals("GpuJobFailure") && JOB.equals(a.labels().get("job"))),
          "no rank of the job pages on its own");
    } finally {
      job.cancel().get();
    }
  }

  /**
   * A real 4-rank DDP job on H200s (shared corpus) whose rank 1 stopped in host code, shipped as
   * one combined stream: torchrun's summary names rank 0, the first timeout line is rank 3's; the
   * job-failure record and its alert name rank 1, hung outside the collective, with the evidence.
   */
  @Test
  @Order(2)
  void theRealHungRankRecordingNamesRankOneHungOutsideTheCollective() throws Exception {
    String jobName = "hang-job";
    List<String> lines =
        java.nio.file.Files.readAllLines(
            Path.of("../../shared/corpus/multi-gpu-h200/hang-rank1.log")
                .toAbsolutePath()
                .normalize());
    Instant t0 = T0.plus(Duration.ofDays(1));
    JobClient job = startJob();
    try {
      try (KafkaOutput out = new KafkaOutput(BROKER.bootstrapServers(), 21)) {
        for (int k = 0; k < lines.size(); k++) {
          out.accept(
              new SimLine(
                  t0.plusMillis(10L * k).toEpochMilli(),
                  "h200-node",
                  jobName,
                  null,
                  null,
                  RecordKind.LOG,
                  "/logs/hang-rank1.log",
                  lines.get(k)));
        }
      }
      laterKernelLineElsewhere(t0.plus(Duration.ofMinutes(40)), 22);
      JobFailure f = null;
      for (byte[] b :
          TopicReader.readUntil(
              BROKER.bootstrapServers(),
              Topics.JOB_FAILURES,
              got -> got.stream().anyMatch(x -> new String(x).contains(jobName)),
              Duration.ofSeconds(3),
              Duration.ofSeconds(120),
              true)) {
        JobFailure x = WireJson.read(b, JobFailure.class);
        if (x.job().equals(jobName)) {
          f = x;
        }
      }
      assertTrue(f != null, "a job-failure record for " + jobName);
      assertEquals(1, f.rank(), "rank 1 hung: " + f);
      assertEquals("hung_outside_collective", f.cause());
      assertEquals("nccl_timeout", f.rootClass());
      String ev = String.join("\n", f.evidence());
      assertTrue(ev.contains("ranks 0, 2, 3 timed out waiting in ALLREDUCE #31"), ev);
      assertTrue(ev.contains("rank 1 had enqueued only up to #30"), ev);
      List<Alert> alerts =
          read(
              Topics.ALERTS,
              got ->
                  got.stream()
                      .anyMatch(
                          a ->
                              a.alertName().equals(GroupJobFailures.ALERT_NAME)
                                  && jobName.equals(a.labels().get("job"))),
              JobFailureIT::alert,
              Duration.ofSeconds(3));
      Alert a =
          alerts.stream()
              .filter(x -> x.alertName().equals(GroupJobFailures.ALERT_NAME))
              .filter(x -> jobName.equals(x.labels().get("job")))
              .reduce((x, y) -> y)
              .orElseThrow();
      assertEquals("1", a.annotations().get("root_rank"));
      assertEquals("hung_outside_collective", a.annotations().get("culprit_cause"));
      assertTrue(
          a.annotations().get("evidence").contains("never issued ALLREDUCE #31"),
          a.annotations().toString());
    } finally {
      job.cancel().get();
    }
  }

  /** Moves the fleet's event time on: a host OOM on another node at {@code at}. */
  private static void laterKernelLineElsewhere(Instant at, long seed) {
    try (KafkaOutput out = new KafkaOutput(BROKER.bootstrapServers(), seed)) {
      out.accept(
          new SimLine(
              at.toEpochMilli(),
              "gpu-node-03",
              null,
              null,
              null,
              RecordKind.KERNEL,
              "gpu-node-03/kern.log",
              "[ 2400.654321] Out of memory: Killed process 5151 (python3) total-vm:912345678kB,"
                  + " anon-rss:123456789kB, file-rss:0kB, shmem-rss:0kB, UID:1000"
                  + " pgtables:456789kB oom_score_adj:0"));
    }
  }

  private static List<Incident> ofJob(List<Incident> all) {
    return all.stream().filter(i -> JOB.equals(i.job()) && i.verdict() == null).toList();
  }

  private static List<Alert> jobFailureAlerts(List<Alert> all) {
    return all.stream()
        .filter(a -> a.alertName().equals(GroupJobFailures.ALERT_NAME))
        .filter(a -> JOB.equals(a.labels().get("job")))
        .toList();
  }

  private interface Reader<T> {
    T read(byte[] b) throws WireFormatException;
  }

  /** Committed values of {@code topic}, read until {@code done} holds and it is then quiet. */
  private static <T> List<T> read(
      String topic, Predicate<List<T>> done, Reader<T> reader, Duration quiet) {
    List<T> out = new ArrayList<>();
    for (byte[] b :
        TopicReader.readUntil(
            BROKER.bootstrapServers(),
            topic,
            got -> done.test(decode(got, reader)),
            quiet,
            Duration.ofSeconds(120),
            true)) {
      out.add(decode(List.of(b), reader).get(0));
    }
    return out;
  }

  private static <T> List<T> decode(List<byte[]> bs, Reader<T> reader) {
    List<T> out = new ArrayList<>();
    for (byte[] b : bs) {
      try {
        out.add(reader.read(b));
      } catch (WireFormatException e) {
        throw new AssertionError(e);
      }
    }
    return out;
  }

  private static Incident incident(byte[] b) throws WireFormatException {
    return WireJson.readIncident(b);
  }

  private static Alert alert(byte[] b) throws WireFormatException {
    return WireJson.readAlert(b);
  }

  private static JobClient startJob() throws Exception {
    ProcessorSettings s =
        ProcessorSettings.builder()
            .kafka(new KafkaSettings(BROKER.bootstrapServers(), Map.of()))
            .groupId("job-failure-it")
            .transactionalIdPrefix("job-failure-it-" + System.nanoTime())
            .rules(List.of())
            .build();
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    ProcessorMain.configure(env, s);
    ProcessorMain.job(s).build(env);
    return env.executeAsync("job-failure-it");
  }
}
