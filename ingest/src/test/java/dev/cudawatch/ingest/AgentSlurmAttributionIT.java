package dev.cudawatch.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.Topics;
import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.kafka.embedded.EmbeddedKafkaBroker;
import dev.cudawatch.kafka.embedded.KafkaBrokerExtension;
import dev.cudawatch.kafka.embedded.TopicReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent runtime's attribution chain on real files: a plain {@code slurm-%j.out} that no {@code
 * cudawatch run} wrapped gets its job from the path and its GPU from the prolog's sidecar; a file
 * the sidecar names as a job's stderr gets that job; any other file keeps the configured job.
 */
class AgentSlurmAttributionIT {
  @RegisterExtension
  final KafkaBrokerExtension kafkaBroker = new KafkaBrokerExtension(); // one per test

  @TempDir Path dir;

  @Test
  void followedSlurmOutputCarriesTheJobAndItsGpu() throws Exception {
    EmbeddedKafkaBroker broker = kafkaBroker.broker();
    broker.createTopics(Topics.ALL, 1);
    KafkaSettings kafka = new KafkaSettings(broker.bootstrapServers(), Map.of());
    Path logs = Files.createDirectories(dir.resolve("logs"));
    Path sidecars = Files.createDirectories(dir.resolve("sidecars"));
    Files.writeString(
        logs.resolve("slurm-4217.out"),
        "RuntimeError: CUDA error: an illegal memory access was encountered\n");
    Files.writeString(logs.resolve("train.err"), "Traceback (most recent call last):\n");
    int uid = (int) Files.getAttribute(logs.resolve("train.err"), "unix:uid");
    Files.writeString(
        sidecars.resolve("4217.json"),
        "{\"job_id\":\"4217\",\"user\":\"alice\",\"node\":\"n1\",\"gpus\":[3],"
            + "\"std_out\":\""
            + logs.resolve("slurm-4217.out")
            + "\",\"std_err\":\""
            + logs.resolve("train.err")
            + "\",\"gpus_from\":\"scontrol show job -d\",\"uid\":"
            + uid
            + "}\n");
    Files.writeString(logs.resolve("notes.log"), "unrelated\n");
    AgentSettings s =
        AgentSettings.builder()
            .kafka(kafka)
            .globs(List.of(logs + "/*.out", logs + "/*.err", logs + "/*.log"))
            .stateDir(dir.resolve("state").toString())
            .kernelLog(null)
            .gpuSampleIntervalMs(0)
            .httpPort(-1)
            .slurm(
                new SlurmSourceSettings(
                    true, sidecars.toString(), null, "", "n1", null, null, null, null))
            .kubernetes(
                new KubernetesSourceSettings(
                    true, dir.resolve("no-kubelet.sock").toString(), null, null, null))
            .build();
    List<LogRecord> got = new ArrayList<>();
    try (AgentRuntime agent = new AgentRuntime(s, Clock.systemUTC())) {
      agent.start(false);
      for (byte[] b :
          TopicReader.readAll(
              broker.bootstrapServers(),
              Topics.LOGS,
              3,
              Duration.ofSeconds(1),
              Duration.ofSeconds(60),
              false)) {
        got.add(WireJson.readLogRecord(b));
      }
    }
    LogRecord out = find(got, "slurm-4217.out");
    assertEquals("4217", out.job());
    assertEquals(3, out.gpu());
    assertEquals("slurm path pattern slurm-%j.out", out.attribution().get("job"));
    assertEquals("slurm sidecar (scontrol show job -d)", out.attribution().get("gpu"));
    assertTrue(out.attribution().get("tried").startsWith("slurm"), out.attribution().toString());
    LogRecord err = find(got, "train.err");
    assertEquals("4217", err.job());
    assertEquals("slurm sidecar (std_err)", err.attribution().get("job"));
    LogRecord other = find(got, "notes.log");
    assertEquals(s.job(), other.job());
    assertNull(other.gpu());
  }

  @Test
  void withFollowSidecarPathsTheAgentShipsOnlyTheOutputOfThisNodesJobs() throws Exception {
    EmbeddedKafkaBroker broker = kafkaBroker.broker();
    broker.createTopics(Topics.ALL, 1);
    Path home = Files.createDirectories(dir.resolve("home/alice"));
    Path sidecars = Files.createDirectories(dir.resolve("sidecars"));
    Files.writeString(home.resolve("slurm-4217.out"), "mine: step 1\n");
    Files.writeString(home.resolve("slurm-4218.out"), "another node's job\n");
    Files.writeString(home.resolve("slurm-4219.out"), "a job this node never ran\n");
    int uid = (int) Files.getAttribute(home.resolve("slurm-4217.out"), "unix:uid");
    for (String[] job : new String[][] {{"4217", "n1"}, {"4218", "n2"}}) {
      Files.writeString(
          sidecars.resolve(job[0] + ".json"),
          "{\"job_id\":\""
              + job[0]
              + "\",\"user\":\"alice\",\"node\":\""
              + job[1]
              + "\",\"gpus\":[3],\"std_out\":\""
              + home.resolve("slurm-" + job[0] + ".out")
              + "\",\"std_err\":\""
              + home.resolve("slurm-" + job[0] + ".out")
              + "\",\"uid\":"
              + uid
              + "}\n");
    }
    AgentSettings s =
        AgentSettings.builder()
            .kafka(new KafkaSettings(broker.bootstrapServers(), Map.of()))
            .globs(List.of())
            .stateDir(dir.resolve("state").toString())
            .kernelLog(null)
            .gpuSampleIntervalMs(0)
            .httpPort(-1)
            .scanIntervalMs(100)
            .slurm(
                new SlurmSourceSettings(
                    true, sidecars.toString(), null, "", "n1", null, null, true, null))
            .kubernetes(new KubernetesSourceSettings(false, null, null, null, null))
            .build();
    List<LogRecord> got = new ArrayList<>();
    try (AgentRuntime agent = new AgentRuntime(s, Clock.systemUTC())) {
      agent.start(false);
      // a line appended later ships too: the file is followed, not read once
      TopicReader.readUntil(
          broker.bootstrapServers(),
          Topics.LOGS,
          l -> !l.isEmpty(),
          Duration.ofMillis(1),
          Duration.ofSeconds(60),
          false);
      Files.writeString(
          home.resolve("slurm-4217.out"),
          "mine: step 2\n",
          java.nio.file.StandardOpenOption.APPEND);
      for (byte[] b :
          TopicReader.readAll(
              broker.bootstrapServers(),
              Topics.LOGS,
              2,
              Duration.ofSeconds(2),
              Duration.ofSeconds(60),
              false)) {
        LogRecord r = WireJson.readLogRecord(b);
        if (r.kind() == dev.cudawatch.common.wire.RecordKind.LOG) {
          got.add(r); // quiet markers aside
        }
      }
    }
    assertEquals(
        List.of("mine: step 1", "mine: step 2"),
        got.stream().map(LogRecord::text).toList(),
        "only the sidecar-named output of this node's job: " + got);
    assertEquals("4217", got.get(0).job());
    assertEquals(3, got.get(1).gpu());
  }

  @Test
  void aReusedPathIsTheNewestJobsAndAClaimOnAnotherUsersFileIsRefusedAndCounted() throws Exception {
    EmbeddedKafkaBroker broker = kafkaBroker.broker();
    broker.createTopics(Topics.ALL, 1);
    Path logs = Files.createDirectories(dir.resolve("logs"));
    Path sidecars = Files.createDirectories(dir.resolve("sidecars"));
    Path train = Files.writeString(logs.resolve("train.log"), "epoch 1 step 10 loss 0.5\n");
    Path alices = Files.writeString(logs.resolve("alice.log"), "alice's step 1\n");
    int mallory = (int) Files.getAttribute(train, "unix:uid");
    Files.setOwner(
        alices,
        alices.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody"));
    java.time.Instant now = java.time.Instant.now();
    // job 500 wrote train.log two days ago; job 501 reuses -o train.log now
    sidecar(sidecars, "500", 1, train, mallory, now.minus(Duration.ofDays(2)));
    sidecar(sidecars, "501", 2, train, mallory, now);
    // mallory's job 502 names alice's file with sbatch -o
    sidecar(sidecars, "502", 3, alices, mallory, now);
    AgentSettings s =
        AgentSettings.builder()
            .kafka(new KafkaSettings(broker.bootstrapServers(), Map.of()))
            .globs(List.of(logs + "/*.log"))
            .stateDir(dir.resolve("state").toString())
            .kernelLog(null)
            .gpuSampleIntervalMs(0)
            .httpPort(0)
            .slurm(
                new SlurmSourceSettings(
                    true, sidecars.toString(), null, "", "n1", null, null, null, null))
            .kubernetes(new KubernetesSourceSettings(false, null, null, null, null))
            .build();
    List<LogRecord> got = new ArrayList<>();
    try (AgentRuntime agent = new AgentRuntime(s, Clock.systemUTC())) {
      agent.start(false);
      for (byte[] b :
          TopicReader.readAll(
              broker.bootstrapServers(),
              Topics.LOGS,
              2,
              Duration.ofSeconds(1),
              Duration.ofSeconds(60),
              false)) {
        LogRecord r = WireJson.readLogRecord(b);
        if (r.kind() == dev.cudawatch.common.wire.RecordKind.LOG) {
          got.add(r);
        }
      }
      String metrics =
          java.net.http.HttpClient.newHttpClient()
              .send(
                  java.net.http.HttpRequest.newBuilder(
                          java.net.URI.create("http://127.0.0.1:" + agent.httpPort() + "/metrics"))
                      .build(),
                  java.net.http.HttpResponse.BodyHandlers.ofString())
              .body();
      assertTrue(
          metrics.contains("cudawatch_agent_attribution_total{what=\"sidecars_refused\"} 1.0"),
          metrics);
    }
    LogRecord reused = find(got, "train.log");
    assertEquals("501", reused.job(), "the running job's, not the one that ended");
    assertEquals(2, reused.gpu());
    LogRecord claimed = find(got, "alice.log");
    assertEquals(s.job(), claimed.job(), "mallory's sidecar does not speak for alice's file");
    assertNull(claimed.gpu());
  }

  private static void sidecar(
      Path dir, String job, int gpu, Path out, int uid, java.time.Instant written)
      throws Exception {
    Path f = dir.resolve(job + ".json");
    Files.writeString(
        f,
        "{\"job_id\":\""
            + job
            + "\",\"node\":\"n1\",\"gpus\":["
            + gpu
            + "],\"std_out\":\""
            + out
            + "\",\"uid\":"
            + uid
            + "}\n");
    Files.setLastModifiedTime(f, java.nio.file.attribute.FileTime.from(written));
  }

  private static LogRecord find(List<LogRecord> got, String name) {
    return got.stream()
        .filter(r -> r.source().endsWith("/" + name))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no record of " + name + " in " + got));
  }
}
