package dev.cudawatch.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.Topics;
import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.kafka.embedded.EmbeddedKafkaBroker;
import dev.cudawatch.kafka.embedded.KafkaBrokerExtension;
import dev.cudawatch.testkit.Await;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A kernel Xid names a pid; that process (a real one, started with a torchrun rank's environment
 * and the job {@code cudawatch run} hands down) is looked up in the real {@code /proc} by the
 * agent's kernel source, and the record on the broker carries its job, rank, local rank and GPU
 * with their sources. A line naming a process that has ended ships as it was, and is counted. And a
 * real {@code cudawatch run} hands its job to the command as {@code CUDAWATCH_JOB}.
 */
class KernelPidJoinIT {
  @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();

  @TempDir Path dir;

  @Test
  void anXidNamingARanksPidShipsWithItsJobRankAndGpu() throws Exception {
    ProcessBuilder pb = new ProcessBuilder("sleep", "60");
    for (String k :
        List.of("SLURM_JOB_ID", "TORCHELASTIC_RUN_ID", "SLURM_PROCID", "SLURM_LOCALID")) {
      pb.environment().remove(k);
    }
    pb.environment()
        .putAll(
            Map.of(
                "CUDAWATCH_JOB", "job9",
                "RANK", "3",
                "LOCAL_RANK", "3",
                "CUDA_VISIBLE_DEVICES", "0,1,2,3"));
    Process rank3 = pb.start();
    Process ended = new ProcessBuilder("true").start();
    assertTrue(ended.waitFor(30, TimeUnit.SECONDS));
    long gonePid = ended.pid(); // reaped: no /proc entry left
    assertFalse(Files.exists(Path.of("/proc", Long.toString(gonePid))));
    String joinedLine =
        "NVRM: Xid (PCI:0000:3b:00): 43, pid=" + rank3.pid() + ", name=sleep, Ch 00000008";
    String goneLine = "NVRM: Xid (PCI:0000:3b:00): 43, pid=" + gonePid + ", name=true, Ch 00000008";
    Path kmsg = Files.createDirectories(dir.resolve("dev")).resolve("kmsg");
    Files.writeString(
        kmsg, "3,1,5000000,-;" + joinedLine + "\n" + "3,2,5000100,-;" + goneLine + "\n");
    EmbeddedKafkaBroker broker = KAFKA.broker();
    try (KafkaConsumer<byte[], byte[]> consumer = KernelLogRebootIT.consumer(broker)) {
      broker.createTopics(Topics.ALL, 2);
      AgentSettings s =
          AgentSettings.builder()
              .kafka(new KafkaSettings(broker.bootstrapServers(), Map.of()))
              .globs(List.of())
              .stateDir(dir.resolve("state").toString())
              .kernelLog(kmsg.toString())
              .gpuSampleIntervalMs(0)
              .httpPort(0)
              .closeInactiveMs(300_000)
              .procDir("/proc") // the real one: boot id, and the pids' environments
              .runSpoolRoot(dir.resolve("spools").toString())
              .nvidiaSmi(dir.resolve("no-nvidia-smi").toString())
              .build();
      List<LogRecord> got = new ArrayList<>();
      try (AgentRuntime agent = new AgentRuntime(s, Clock.systemUTC())) {
        agent.start(false);
        Await.until(
            "both kernel records in Kafka",
            () -> {
              for (var r : consumer.poll(Duration.ofMillis(200))) {
                got.add(WireJson.readLogRecord(r.value()));
              }
              return got.size();
            },
            n -> n >= 2,
            Duration.ofSeconds(60));
        String metrics = get(agent.httpPort(), "/metrics");
        assertTrue(
            metrics.contains("cudawatch_agent_kmsg_pid_joins_total{result=\"joined\"} 1.0"),
            metrics);
        assertTrue(
            metrics.contains("cudawatch_agent_kmsg_pid_joins_total{result=\"gone\"} 1.0"), metrics);
      } finally {
        rank3.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      }
      LogRecord joined = only(got, joinedLine);
      assertEquals(RecordKind.KERNEL, joined.kind());
      assertEquals("job9", joined.job());
      assertEquals(3, joined.rank());
      assertEquals(3, joined.localRank());
      assertEquals(3, joined.gpu(), "device LOCAL_RANK of CUDA_VISIBLE_DEVICES (no nvidia-smi)");
      String from = "pid " + rank3.pid() + "'s environment";
      assertEquals(from + " (CUDAWATCH_JOB)", joined.attribution().get("job"));
      assertEquals(from + " (RANK)", joined.attribution().get("rank"));
      assertEquals(from + " (LOCAL_RANK)", joined.attribution().get("local_rank"));
      assertEquals(
          from + " (CUDA_VISIBLE_DEVICES device LOCAL_RANK)", joined.attribution().get("gpu"));
      assertEquals(Long.toString(rank3.pid()), joined.attribution().get("pid"));

      LogRecord gone = only(got, goneLine);
      assertNull(gone.job());
      assertNull(gone.rank());
      assertNull(gone.gpu());
      assertNull(gone.attribution());
    }
  }

  @Test
  void runHandsItsJobToTheCommandAsCudawatchJob() throws Exception {
    String refused = "127.0.0.1:" + EmbeddedKafkaBroker.freePort(); // not shipping here
    Map<String, String> noJob = new java.util.HashMap<>();
    for (String k :
        List.of(
            "CUDAWATCH_JOB",
            "SLURM_JOB_ID",
            "TORCHELASTIC_RUN_ID",
            "KUBERNETES_POD_NAME",
            "POD_NAME",
            "CUDAWATCH_AGENT_JOB")) {
      noJob.put(k, null);
    }
    // --job: the command sees it
    assertEquals("[J]", run(refused, noJob, "--job", "J").strip());
    // from the environment (Slurm's), the same
    Map<String, String> slurm = new java.util.HashMap<>(noJob);
    slurm.put("SLURM_JOB_ID", "4242");
    assertEquals("[4242]", run(refused, slurm).strip());
    // a job that is not known is not made up for the command
    assertEquals("[]", run(refused, noJob).strip());
  }

  /** `cudawatch run [opts] -- sh -c 'echo [$CUDAWATCH_JOB]'` with {@code env} (null removes). */
  private String run(String bootstrap, Map<String, String> env, String... opts) throws Exception {
    Path config = dir.resolve("agent.yaml");
    Files.writeString(
        config,
        "state_dir: "
            + dir.resolve("state")
            + "\nrun_spool_root: "
            + dir.resolve("spools")
            + "\nhost: n1\nnvidia_smi: "
            + dir.resolve("no-nvidia-smi")
            + "\n");
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(
        List.of(
            "-Xmx128m",
            "-cp",
            System.getProperty("java.class.path"),
            RunMain.class.getName(),
            "--config",
            config.toString(),
            "--bootstrap-servers",
            bootstrap,
            "--drain-seconds",
            "0"));
    cmd.addAll(List.of(opts));
    cmd.addAll(List.of("--", "sh", "-c", "echo \"[$CUDAWATCH_JOB]\""));
    Path out = dir.resolve("run.out");
    Path err = dir.resolve("run.err");
    ProcessBuilder pb =
        new ProcessBuilder(cmd)
            .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
            .redirectOutput(out.toFile())
            .redirectError(err.toFile());
    env.forEach(
        (k, v) -> {
          if (v == null) {
            pb.environment().remove(k);
          } else {
            pb.environment().put(k, v);
          }
        });
    Process p = pb.start();
    assertTrue(p.waitFor(300, TimeUnit.SECONDS), "run ends");
    assertEquals(0, p.exitValue(), Files.readString(err));
    return Files.readString(out, StandardCharsets.UTF_8);
  }

  private static LogRecord only(List<LogRecord> got, String text) {
    List<LogRecord> l = got.stream().filter(r -> r.text().equals(text)).toList();
    assertEquals(1, l.size(), "one record of " + text + " in " + got);
    return l.get(0);
  }

  private static String get(int port, String path) throws Exception {
    return HttpClient.newHttpClient()
        .send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(5))
                .build(),
            HttpResponse.BodyHandlers.ofString())
        .body();
  }
}
