package dev.cudawatch.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.Topics;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.kafka.embedded.EmbeddedKafkaBroker;
import dev.cudawatch.kafka.embedded.KafkaBrokerExtension;
import dev.cudawatch.testkit.Await;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A job cannot choose the node its records are about: a real {@code cudawatch run} process whose
 * environment sets HOSTNAME and CUDAWATCH_AGENT_HOST ships every record with this machine's host
 * name, while the job's own facts (its Slurm job id, its rank, its GPU) still come from its
 * environment.
 */
class RunIdentityIT {
  @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();

  @TempDir Path dir;

  @Test
  void theHostIsTheMachinesNeverTheJobsEnvironments() throws Exception {
    EmbeddedKafkaBroker broker = KAFKA.broker();
    broker.createTopics(Topics.ALL, 2);
    Path config = dir.resolve("agent.yaml");
    Files.writeString(
        config,
        "state_dir: "
            + dir.resolve("state")
            + "\nrun_spool_root: "
            + dir.resolve("spools")
            + "\nnvidia_smi: /nonexistent/nvidia-smi\n");
    List<String> cmd =
        List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx128m",
            "-cp",
            System.getProperty("java.class.path"),
            RunMain.class.getName(),
            "--config",
            config.toString(),
            "--bootstrap-servers",
            broker.bootstrapServers(),
            "--drain-seconds",
            "30",
            "--",
            "sh",
            "-c",
            "echo 'NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus'");
    ProcessBuilder pb =
        new ProcessBuilder(cmd)
            .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
            .redirectOutput(dir.resolve("run.out").toFile())
            .redirectError(dir.resolve("run.err").toFile());
    pb.environment().put("HOSTNAME", "someone-elses-node");
    pb.environment().put("CUDAWATCH_AGENT_HOST", "someone-elses-node");
    pb.environment().put("SLURM_JOB_ID", "4242");
    pb.environment().put("SLURM_PROCID", "3");
    pb.environment().put("CUDA_VISIBLE_DEVICES", "2");
    for (String k : List.of("RANK", "LOCAL_RANK", "TORCHELASTIC_RUN_ID")) {
      pb.environment().remove(k);
    }
    Process p = pb.start();
    assertTrue(p.waitFor(120, TimeUnit.SECONDS), "run ends");
    assertEquals(0, p.exitValue(), Files.readString(dir.resolve("run.err")));

    List<LogRecord> got = new ArrayList<>();
    try (var c =
        new KafkaConsumer<byte[], byte[]>(
            Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                broker.bootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG,
                "identity",
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG,
                "earliest"),
            new ByteArrayDeserializer(),
            new ByteArrayDeserializer())) {
      c.subscribe(List.of(Topics.LOGS));
      Await.until(
          "the line, its quiet markers and the exit in Kafka",
          () -> {
            for (var r : c.poll(Duration.ofMillis(200))) {
              got.add(WireJson.readLogRecord(r.value()));
            }
            return got.stream().anyMatch(r -> r.kind() == RecordKind.EXIT);
          },
          exited -> exited,
          Duration.ofSeconds(60));
    }
    String machine = NodeEnvironment.hostname();
    for (LogRecord r : got) {
      assertEquals(machine, r.host(), r.toString());
      assertTrue(r.id().startsWith(machine + ":"), r.id());
    }
    LogRecord line = got.stream().filter(r -> r.kind() == RecordKind.LOG).findFirst().orElseThrow();
    assertEquals("4242", line.job(), "the job's own id still comes from its environment");
    assertEquals(3, line.rank());
    assertEquals(2, line.gpu());
  }
}
