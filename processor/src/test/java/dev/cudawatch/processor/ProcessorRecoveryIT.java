package dev.cudawatch.processor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.Topics;
import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.kafka.embedded.KafkaBrokerExtension;
import dev.cudawatch.kafka.embedded.TopicReader;
import dev.cudawatch.processor.config.ProcessorSettings;
import dev.cudawatch.testkit.Await;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The job is cancelled mid-stream on the MiniCluster and a new one restores from the last retained
 * checkpoint, while lines keep arriving: every alert is in {@code cudawatch.alerts} exactly once
 * when read with read_committed.
 */
class ProcessorRecoveryIT {
  private static final int HOSTS = 120;

  @RegisterExtension
  static final MiniClusterExtension FLINK =
      new MiniClusterExtension(
          new MiniClusterResourceConfiguration.Builder()
              .setNumberTaskManagers(1)
              .setNumberSlotsPerTaskManager(2)
              .build());

  @TempDir static Path dir;

  @RegisterExtension
  static final KafkaBrokerExtension BROKER = new KafkaBrokerExtension(Topics.ALL, 2);

  @Test
  void killedMidStreamAndRestoredEveryAlertIsThereExactlyOnce() throws Exception {
    Path checkpoints = dir.resolve("checkpoints");
    Thread writer = new Thread(ProcessorRecoveryIT::writeFleet, "fleet-writer");
    writer.start();
    JobClient first = start(checkpoints, null);
    Path last;
    try {
      // kill it once a checkpoint is complete and some hosts, but not all, have been seen
      last = awaitCheckpoint(checkpoints, Duration.ofSeconds(60));
    } finally {
      first.cancel().get();
    }
    assertTrue(writer.isAlive(), "the job was killed mid-stream");
    JobClient second = start(checkpoints, last);
    try {
      writer.join();
      // per host: 3 incident alerts and 1 repeated-access alert; and one fleet-wide spike
      int expectAlerts = HOSTS * 4 + 1;
      List<byte[]> read =
          TopicReader.readAll(
              BROKER.bootstrapServers(),
              Topics.ALERTS,
              expectAlerts,
              Duration.ofSeconds(5),
              Duration.ofSeconds(120),
              true);
      Map<String, Integer> seen = new TreeMap<>();
      for (byte[] b : read) {
        Alert a = WireJson.readAlert(b);
        seen.merge(a.fingerprint() + "/" + a.state(), 1, Integer::sum);
      }
      assertEquals(expectAlerts, read.size(), "alerts in the topic");
      assertTransactionalIdsPooled(checkpoints);
      assertTrue(
          seen.values().stream().allMatch(n -> n == 1),
          "duplicates: "
              + seen.entrySet().stream()
                  .filter(e -> e.getValue() > 1)
                  .map(Map.Entry::getKey)
                  .toList());
    } finally {
      second.cancel().get();
    }
  }

  /**
   * The sinks reuse a pool of transactional ids: the broker keeps each id it saw for a week, so a
   * new id per checkpoint and sink subtask (the connector's default) grows its memory with uptime.
   */
  private static void assertTransactionalIdsPooled(Path checkpoints) throws Exception {
    int checkpointsTaken = number(newestCheckpoint(checkpoints).orElseThrow());
    // incidents, alerts, job failures, actions, dead letters, each at parallelism 2
    int sinkSubtasks = 5 * 2;
    try (Admin admin =
        Admin.create(
            Map.<String, Object>of(
                AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrapServers()))) {
      List<String> ids =
          admin.listTransactions().all().get().stream()
              .map(TransactionListing::transactionalId)
              .filter(id -> id.startsWith("recovery-it"))
              .toList();
      assertTrue(checkpointsTaken >= 8, "checkpoints taken: " + checkpointsTaken);
      // a few per sink subtask (one open, one committing, a spare), however many checkpoints ran
      assertTrue(
          ids.size() <= sinkSubtasks * 4,
          ids.size() + " transactional ids after " + checkpointsTaken + " checkpoints: " + ids);
    }
  }

  /** Three illegal accesses on GPU 0 of each host, one host every 50 ms. */
  private static void writeFleet() {
    try (var p =
        new KafkaProducer<byte[], byte[]>(
            Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrapServers()),
            new ByteArraySerializer(),
            new ByteArraySerializer())) {
      Instant t0 = Instant.parse("2026-11-22T03:00:00Z");
      for (int h = 0; h < HOSTS; h++) {
        for (int k = 0; k < 3; k++) {
          LogRecord r =
              LogRecord.builder()
                  .host("host-" + h)
                  .job("job-" + h) // one job per host: no lemon GPU
                  .gpu(0)
                  .source("/logs/job-" + k + ".log")
                  .offset(0)
                  .eventTime(t0.plusSeconds(h * 3L + k))
                  .text("RuntimeError: CUDA error: an illegal memory access was encountered")
                  .build();
          p.send(
                  new ProducerRecord<>(
                      Topics.LOGS,
                      r.streamKey().getBytes(StandardCharsets.UTF_8),
                      WireJson.toBytes(r)))
              .get();
        }
        Thread.sleep(50); // pacing, part of the scenario: a steady stream the kill lands in
      }
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static JobClient start(Path checkpoints, Path restoreFrom) throws Exception {
    ProcessorSettings s =
        ProcessorSettings.builder()
            .kafka(new KafkaSettings(BROKER.bootstrapServers(), Map.of()))
            .groupId("recovery-it")
            .parallelism(2)
            .checkpointIntervalMs(300L)
            .transactionalIdPrefix("recovery-it")
            .flushAfterMs(300L)
            .build();
    Configuration conf = new Configuration();
    conf.setString("execution.checkpointing.dir", checkpoints.toUri().toString());
    conf.setString(
        "execution.checkpointing.externalized-checkpoint-retention", "RETAIN_ON_CANCELLATION");
    if (restoreFrom != null) {
      conf.setString("execution.state-recovery.path", restoreFrom.toUri().toString());
    }
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    ProcessorMain.configure(env, s);
    ProcessorMain.job(s).build(env);
    return env.executeAsync("recovery-it");
  }

  /** The newest completed checkpoint (one with its metadata written) after a few have completed. */
  private static Path awaitCheckpoint(Path checkpoints, Duration timeout) {
    return Await.until(
            "a third completed checkpoint",
            () -> newestCheckpoint(checkpoints),
            newest -> newest.isPresent() && number(newest.get()) >= 3,
            timeout)
        .orElseThrow();
  }

  private static Optional<Path> newestCheckpoint(Path checkpoints) throws Exception {
    if (!Files.isDirectory(checkpoints)) {
      return Optional.empty();
    }
    try (Stream<Path> s = Files.walk(checkpoints, 2)) {
      return s.filter(p -> p.getFileName().toString().startsWith("chk-"))
          .filter(p -> Files.exists(p.resolve("_metadata")))
          .max(Comparator.comparingInt(ProcessorRecoveryIT::number));
    }
  }

  private static int number(Path chk) {
    return Integer.parseInt(chk.getFileName().toString().substring(4));
  }
}
