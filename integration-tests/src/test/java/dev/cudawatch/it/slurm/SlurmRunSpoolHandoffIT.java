package dev.cudawatch.it.slurm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.Topics;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.kafka.embedded.EmbeddedKafkaBroker;
import dev.cudawatch.testkit.Await;
import java.io.File;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The run-spool handoff on a real one-node Slurm: the prolog (deploy/slurm) creates the handoff
 * root for the group {@code cudawatch}; a job of an unprivileged user (made with useradd, removed
 * after) runs its task through cudawatch-srun while Kafka is down, so {@code cudawatch run} spools;
 * another user plants a spool under root's name; then the agent, running as the packaged system
 * user {@code cudawatch}, ships every line of the job once Kafka is back and refuses and counts the
 * planted one. What the users execute is staged in a world-readable directory.
 */
class SlurmRunSpoolHandoffIT {
  private static final Path REPO = Path.of("..").toAbsolutePath().normalize();

  @TempDir Path tmp;

  @Test
  void aSlurmJobsSpoolIsShippedByTheAgentsOwnUserAndAPlantedOneIsRefused() throws Exception {
    SlurmCluster.requireSlurm();
    Path jar = REPO.resolve("ingest/target/cudawatch-agent.jar");
    assertTrue(Files.exists(jar), jar + " is missing: build ingest first (package)");
    String tag = UUID.randomUUID().toString().substring(0, 6);
    String user = "cwslurm" + tag;
    String planter = "cwplant" + tag;
    List<String> made = new ArrayList<>();
    Process agent = null;
    try {
      if (!exists("cudawatch")) {
        sh("useradd --system --no-create-home --shell /usr/sbin/nologin --user-group cudawatch");
        made.add("cudawatch");
      }
      for (String u : List.of(user, planter)) {
        sh("useradd --no-create-home --shell /bin/sh " + u);
        made.add(u);
      }
      int uid = Integer.parseInt(out("id", "-u", user).strip());
      int gid = Integer.parseInt(out("id", "-g", user).strip());

      // a world-readable CUDAWATCH_HOME: the clone may sit in a 0700 home
      SlurmCluster.openUp(tmp);
      Path home = Files.createDirectories(tmp.resolve("cudawatch-home"));
      for (String f : List.of("bin/cudawatch", "deploy/slurm/cudawatch-srun")) {
        Files.createDirectories(home.resolve(f).getParent());
        Files.copy(REPO.resolve(f), home.resolve(f));
        Files.setPosixFilePermissions(
            home.resolve(f), PosixFilePermissions.fromString("rwxr-xr-x"));
      }
      Files.createDirectories(home.resolve("ingest/target"));
      Files.copy(jar, home.resolve("ingest/target/cudawatch-agent.jar"));
      Path work = Files.createDirectories(tmp.resolve("work"));
      sh("chown " + user + " " + work);
      Path etc = Files.createDirectories(tmp.resolve("etc"));
      SlurmCluster.openUp(etc);
      for (String s : List.of("prolog.sh", "epilog.sh")) {
        Files.copy(REPO.resolve("deploy/slurm/" + s), etc.resolve(s));
        Files.setPosixFilePermissions(etc.resolve(s), PosixFilePermissions.fromString("rwxr-xr-x"));
      }
      Path handoff = tmp.resolve("spool/cudawatch/run");
      Files.writeString(
          etc.resolve("cudawatch-slurm.env"),
          "CUDAWATCH_LOG_ROOT="
              + tmp.resolve("training")
              + "\nCUDAWATCH_EVENTS="
              + tmp.resolve("node/slurm-jobs.log")
              + "\nCUDAWATCH_SLURM_SIDECAR_DIR="
              + tmp.resolve("run/slurm")
              + "\nCUDAWATCH_RUN_SPOOL_ROOT="
              + handoff
              + "\nCUDAWATCH_START_AGENT=0\n");
      Files.createDirectories(handoff.getParent());
      SlurmCluster.openUp(handoff.getParent());
      SlurmCluster.openUp(handoff.getParent().getParent());

      int brokerPort = EmbeddedKafkaBroker.freePort();
      int controllerPort = EmbeddedKafkaBroker.freePort();
      try (SlurmCluster slurm =
          SlurmCluster.start(
              Files.createDirectories(tmp.resolve("slurm")),
              etc.resolve("prolog.sh"),
              etc.resolve("epilog.sh"))) {
        Map<String, String> env = new HashMap<>();
        env.put("CUDAWATCH_HOME", home.toString());
        env.put("CUDAWATCH_AGENT_KAFKA__BOOTSTRAP_SERVERS", "127.0.0.1:" + brokerPort); // down
        env.put("CUDAWATCH_AGENT_RUN_SPOOL_ROOT", handoff.toString());
        env.put("HOME", work.toString());
        Path script = work.resolve("train.sh");
        Files.writeString(
            script,
            """
            #!/bin/bash
            umask 077
            srun --ntasks=1 "$CUDAWATCH_HOME/deploy/slurm/cudawatch-srun" \\
              bash -c 'for i in $(seq 1 30); do echo "rank $SLURM_PROCID step $i"; done'
            """);
        Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));
        String jobId =
            slurm.sbatchAs(
                uid, gid, env, script, "--chdir=" + work, "--output=" + work + "/slurm-%j.out");
        String state = slurm.awaitJobEnd(jobId, 180);
        String jobOut = Files.readString(work.resolve("slurm-" + jobId + ".out"));
        assertEquals("COMPLETED", state, jobOut);
        assertTrue(jobOut.contains("rank 0 step 30"), jobOut);
        assertTrue(Files.isDirectory(handoff), "the prolog made the handoff root");
        assertEquals("rwxrws-wt", modeString(handoff));
        Path userDir = handoff.resolve("cudawatch-run-" + user);
        assertTrue(Files.isDirectory(userDir), "run spooled in the handoff root:\n" + jobOut);

        // another user plants a spool under root's name
        Path planted = handoff.resolve("cudawatch-run-root/forged");
        sh(
            "setpriv --reuid="
                + planter
                + " --regid="
                + planter
                + " --clear-groups -- sh -c 'mkdir -p "
                + planted
                + " && printf \"\\000\\000\\000\\002{}\" > "
                + planted
                + "/00000000000000000001.seg'");

        // the agent as the packaged user, then Kafka back
        int httpPort = EmbeddedKafkaBroker.freePort();
        Path agentState = Files.createDirectories(tmp.resolve("agent-state"));
        sh("chown cudawatch:cudawatch " + agentState);
        Path config = etc.resolve("agent.yaml");
        Files.writeString(
            config,
            "kafka:\n  bootstrap_servers: 127.0.0.1:"
                + brokerPort
                + "\nhost: "
                + slurm.node()
                + "\nstate_dir: "
                + agentState
                + "\nrun_spool_root: "
                + handoff
                + "\ngpu_sample_interval_ms: 0\nhttp_port: "
                + httpPort
                + "\nslurm:\n  enabled: false\nkubernetes:\n  enabled: false\n");
        agent =
            new ProcessBuilder(
                    "setpriv",
                    "--reuid=cudawatch",
                    "--regid=cudawatch",
                    "--init-groups",
                    "--",
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-cp",
                    home.resolve("ingest/target/cudawatch-agent.jar").toString(),
                    "dev.cudawatch.ingest.AgentMain",
                    "--config",
                    config.toString())
                .redirectErrorStream(true)
                .redirectOutput(tmp.resolve("agent.log").toFile())
                .redirectInput(new File("/dev/null"))
                .start();
        List<LogRecord> got = new ArrayList<>();
        try (EmbeddedKafkaBroker broker =
                EmbeddedKafkaBroker.start(tmp.resolve("kafka"), brokerPort, controllerPort);
            var c = consumer(broker.bootstrapServers())) {
          broker.createTopics(Topics.ALL, 2);
          c.subscribe(List.of(Topics.LOGS));
          Await.until(
              "the job's 30 lines and its exit in Kafka",
              () -> {
                for (var r : c.poll(Duration.ofMillis(200))) {
                  got.add(WireJson.readLogRecord(r.value()));
                }
                return got;
              },
              g ->
                  g.stream().filter(r -> r.kind() == RecordKind.LOG).count() >= 30
                      && g.stream().anyMatch(r -> r.kind() == RecordKind.EXIT),
              Duration.ofSeconds(120));
          c.poll(Duration.ofSeconds(2)).forEach(r -> got.add(read(r.value())));
        }
        List<LogRecord> lines =
            got.stream().filter(r -> r.kind() == RecordKind.LOG && jobId.equals(r.job())).toList();
        assertEquals(30, lines.size(), "every line once");
        assertEquals(30, lines.stream().map(LogRecord::id).distinct().count());
        for (LogRecord r : lines) {
          assertEquals(slurm.node(), r.host());
          assertEquals(user, r.attribution().get("spool_owner"));
        }
        String metrics = get(httpPort, "/metrics");
        assertTrue(
            metrics.contains("cudawatch_agent_run_spools_refused_total{reason=\"owner\"} 1.0"),
            metrics);
        assertTrue(Files.exists(planted.resolve("00000000000000000001.seg")), "left as it is");
      }
    } finally {
      if (agent != null) {
        agent.destroy();
        if (!agent.waitFor(15, TimeUnit.SECONDS)) {
          agent.destroyForcibly();
        }
      }
      for (String u : made) {
        sh("userdel " + u + " || true; groupdel " + u + " 2>/dev/null || true");
      }
    }
  }

  private static boolean exists(String user) throws Exception {
    return new ProcessBuilder("id", user).start().waitFor() == 0;
  }

  private static String modeString(Path p) throws Exception {
    return out("stat", "-c", "%A", p.toString()).strip().substring(1);
  }

  private static void sh(String script) throws Exception {
    out("sh", "-c", script);
  }

  private static String out(String... cmd) throws Exception {
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String o = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), String.join(" ", cmd));
    assertEquals(0, p.exitValue(), String.join(" ", cmd) + ": " + o);
    return o;
  }

  private static LogRecord read(byte[] b) {
    try {
      return WireJson.readLogRecord(b);
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  private static String get(int port, String path) throws Exception {
    HttpResponse<String> r =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
                HttpResponse.BodyHandlers.ofString());
    return r.body();
  }

  private static KafkaConsumer<byte[], byte[]> consumer(String bootstrap) {
    return new KafkaConsumer<>(
        Map.of(
            ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
            bootstrap,
            ConsumerConfig.GROUP_ID_CONFIG,
            "slurm-handoff",
            ConsumerConfig.AUTO_OFFSET_RESET_CONFIG,
            "earliest"),
        new ByteArrayDeserializer(),
        new ByteArrayDeserializer());
  }
}
