package dev.cudawatch.it.slurm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cudawatch.common.Topics;
import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.ingest.AgentRuntime;
import dev.cudawatch.ingest.AgentSettings;
import dev.cudawatch.ingest.KubernetesSourceSettings;
import dev.cudawatch.ingest.SlurmSourceSettings;
import dev.cudawatch.launcher.LocalCluster;
import dev.cudawatch.testkit.Await;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * deploy/slurm on a real one-node Slurm: the prolog and epilog installed as slurm.conf's Prolog and
 * Epilog, a job submitted by an ordinary user (nobody) with sbatch, two tasks started by srun
 * through cudawatch-srun, one of them dying on a real CUDA traceback from the H200 corpus. Its
 * output goes through cudawatch run to a real broker and Flink job (LocalCluster), and the test
 * checks that every record and the incident carry the Slurm job id and the task's rank; a plain
 * sbatch job (no cudawatch run) followed by a node agent (no glob: the output paths the prolog's
 * sidecar names for this node's job) gets its job id from its slurm-%j.out path and, for its stderr
 * file, from the sidecar the prolog wrote; and that the node is never drained (also when the job's
 * log directory is gone before the epilog), and that root writes nothing into a path the user
 * controls.
 */
class SlurmJobIT {
  private static final int NOBODY = 65534;
  private static final int NOGROUP = 65534;
  private static final Path REPO = Path.of("..").toAbsolutePath().normalize();
  private static final Path TRACEBACK =
      REPO.resolve("../shared/corpus/real/illegal_address_torch.log").normalize();

  @TempDir Path tmp;
  private final HttpClient http = HttpClient.newHttpClient();

  @Test
  void twoSrunTasksShipTheirRanksUnderTheJobIdAndTheEpilogNeverDrainsTheNode() throws Exception {
    SlurmCluster.requireSlurm();
    Path agentJar = REPO.resolve("ingest/target/cudawatch-agent.jar");
    assertTrue(Files.exists(agentJar), agentJar + " is missing: build ingest first (package)");
    Path traceback =
        Files.exists(TRACEBACK) ? TRACEBACK : REPO.resolve("samples/illegal_address_torch.log");
    assertTrue(Files.exists(traceback), "no real traceback at " + TRACEBACK);

    // the layout of a node: root-owned log root and job notes, the user's home, root's Slurm
    SlurmCluster.openUp(tmp);
    Path etc = Files.createDirectories(tmp.resolve("etc"));
    Path logRoot = Files.createDirectories(tmp.resolve("training"));
    Path events = tmp.resolve("node/slurm-jobs.log");
    Path sidecars = tmp.resolve("run/cudawatch/slurm");
    Path home = Files.createDirectories(tmp.resolve("home"));
    Path victim = Files.createDirectories(tmp.resolve("victim")); // root's, not the user's
    Files.writeString(victim.resolve("root-only.conf"), "untouched\n");
    for (Path p : List.of(etc, logRoot, victim)) {
      SlurmCluster.openUp(p);
    }
    Files.setOwner(
        home, home.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody"));
    Files.copy(traceback, home.resolve("traceback.log"));
    Files.setPosixFilePermissions(
        home.resolve("traceback.log"), PosixFilePermissions.fromString("rw-r--r--"));
    for (String s : List.of("prolog.sh", "epilog.sh")) {
      Path to = etc.resolve(s);
      Files.copy(REPO.resolve("deploy/slurm/" + s), to);
      assertTrue(Files.isExecutable(REPO.resolve("deploy/slurm/" + s)), s + " is not executable");
      Files.setPosixFilePermissions(to, PosixFilePermissions.fromString("rwxr-xr-x"));
    }
    Files.writeString(
        etc.resolve("cudawatch-slurm.env"),
        "CUDAWATCH_LOG_ROOT="
            + logRoot
            + "\nCUDAWATCH_EVENTS="
            + events
            + "\nCUDAWATCH_SLURM_SIDECAR_DIR="
            + sidecars
            + "\nCUDAWATCH_START_AGENT=0\n");

    ByteArrayOutputStream console = new ByteArrayOutputStream();
    var options =
        new LocalCluster.Options(
            tmp.resolve("pipeline"),
            tmp.resolve("pipeline-logs"),
            null,
            0,
            1,
            null,
            null,
            null,
            List.of());
    try (LocalCluster pipeline =
            new LocalCluster(options, new PrintStream(console, true, StandardCharsets.UTF_8));
        SlurmCluster slurm =
            SlurmCluster.start(
                Files.createDirectories(tmp.resolve("slurm")),
                etc.resolve("prolog.sh"),
                etc.resolve("epilog.sh"))) {
      pipeline.start();
      Map<String, String> env = new HashMap<>();
      // what the job's user runs, where that user can reach it: the clone may sit in a 0700 home
      env.put("CUDAWATCH_HOME", stageForJobs(tmp.resolve("cudawatch-home")).toString());
      env.put("CUDAWATCH_AGENT_KAFKA__BOOTSTRAP_SERVERS", pipeline.bootstrapServers());
      // no node agent adopts this scenario's spools: `run` itself waits for Kafka (a loaded
      // machine's first connection can take longer than the 1 s default)
      env.put("CUDAWATCH_RUN_DRAIN_SECONDS", "30");
      // and what it leaves stays in the test's directory, not the machine's /var/tmp
      Path runSpools = Files.createDirectories(tmp.resolve("run-spools"));
      Files.setPosixFilePermissions(
          runSpools, java.nio.file.attribute.PosixFilePermissions.fromString("rwxrwxrwx"));
      env.put("CUDAWATCH_AGENT_RUN_SPOOL_ROOT", runSpools.toString());
      env.put("LOG_ROOT", logRoot.toString());
      env.put("HOME", home.toString());

      // job 1: two tasks; rank 1 dies on a real illegal-memory-access traceback. The job also
      // plants a symlink in its own directory where the old epilog appended as root.
      Path script1 = home.resolve("train.sh");
      Files.writeString(
          script1,
          """
          #!/bin/bash
          # the prolog made this job's directory, owned by the job's user
          dir="$LOG_ROOT/$SLURM_JOB_ID"
          export CUDAWATCH_AGENT_STATE_DIR="$dir/.cudawatch"
          ln -s %s/root-only.conf "$dir/slurm-job.log"
          srun --ntasks=2 --kill-on-bad-exit=0 "$CUDAWATCH_HOME/deploy/slurm/cudawatch-srun" \\
            bash -c 'echo "rank $SLURM_PROCID local $SLURM_LOCALID step 1 loss 0.5"
                     if [ "$SLURM_PROCID" = 1 ]; then cat "$HOME/traceback.log" >&2; exit 1; fi
                     echo "rank $SLURM_PROCID step 2 loss 0.4"'
          """
              .formatted(victim));
      String job1 =
          slurm.sbatchAs(
              NOBODY,
              NOGROUP,
              env,
              script1,
              "--ntasks=2",
              "--chdir=" + home,
              "--output=" + home + "/slurm-%j.out");
      String state1 = slurm.awaitJobEnd(job1, 180);
      String out1 = Files.readString(home.resolve("slurm-" + job1 + ".out"));
      assertEquals("FAILED", state1, "rank 1 failed, so the job did\n" + out1);
      assertTrue(
          out1.contains("rank 0 step 2 loss 0.4"), "output passes through unchanged:\n" + out1);
      assertTrue(out1.contains("an illegal memory access was encountered"), out1);
      assertNodeUsable(slurm);

      // every line of both tasks reached Kafka with the job id and the task's own rank
      List<String> expected = new ArrayList<>(List.of("rank 1 local 1 step 1 loss 0.5"));
      expected.addAll(Files.readAllLines(traceback));
      List<String> rank1Lines = expected.stream().filter(l -> !l.isBlank()).toList();
      List<LogRecord> records = new ArrayList<>();
      // the exit records and rank 1's stderr lines travel on different keys, so on different
      // partitions: the wait is for all that is asserted, not for the exit records alone
      await(
          () -> {
            records.addAll(poll(pipeline.bootstrapServers()));
            return records.stream()
                        .filter(r -> job1.equals(r.job()) && r.kind() == RecordKind.EXIT)
                        .count()
                    >= 2
                && records.stream()
                    .filter(
                        r ->
                            job1.equals(r.job())
                                && r.kind() == RecordKind.LOG
                                && Integer.valueOf(1).equals(r.rank()))
                    .map(LogRecord::text)
                    .toList()
                    .containsAll(rank1Lines);
          },
          60,
          "both tasks' exit records and rank 1's lines");
      List<LogRecord> mine = records.stream().filter(r -> job1.equals(r.job())).toList();
      Set<Integer> ranks = new TreeSet<>();
      for (LogRecord r : mine) {
        assertNotNull(r.rank(), "a record without a rank: " + r);
        assertEquals(r.rank(), r.localRank(), "one node: local rank = rank");
        ranks.add(r.rank());
      }
      assertEquals(Set.of(0, 1), ranks);
      List<String> rank1 =
          mine.stream()
              .filter(r -> r.rank() == 1 && r.kind() == RecordKind.LOG)
              .map(LogRecord::text)
              .toList();
      assertTrue(rank1.containsAll(rank1Lines), "rank 1 shipped " + rank1);
      assertTrue(
          mine.stream()
              .anyMatch(
                  r ->
                      r.rank() == 1
                          && r.kind() == RecordKind.EXIT
                          && r.text().contains("exit_code=1")));
      assertTrue(
          mine.stream()
              .anyMatch(
                  r ->
                      r.rank() == 0
                          && r.kind() == RecordKind.EXIT
                          && r.text().contains("exit_code=0")));

      // and the pipeline's incident names the job and the failing rank
      String base = "http://127.0.0.1:" + pipeline.httpPort();
      await(
          () -> get(base + "/api/incidents?job=" + job1).contains("illegal_memory_access"),
          60,
          "the incident");
      JsonNode incidents =
          WireJson.mapper().readTree(get(base + "/api/incidents?job=" + job1)).get("incidents");
      JsonNode incident = null;
      for (JsonNode i : incidents) {
        if (i.path("class").asText().equals("illegal_memory_access")
            && i.path("root").asBoolean()) {
          incident = i;
        }
      }
      assertNotNull(incident, incidents.toString());
      assertEquals(job1, incident.path("job").asText());
      assertEquals(1, incident.path("fields").path("rank").asInt(-1), incident.toString());
      System.out.println(
          "slurm job "
              + job1
              + " incident: class="
              + incident.path("class").asText()
              + " job="
              + incident.path("job").asText()
              + " rank="
              + incident.path("fields").path("rank"));

      // the job's directory and everything in it are the user's; root wrote nothing through it
      assertOwnedByUserOnly(logRoot.resolve(job1));
      assertEquals("untouched\n", Files.readString(victim.resolve("root-only.conf")));
      try (Stream<Path> s = Files.list(victim)) {
        assertEquals(1, s.count(), "root wrote into the victim directory");
      }
      // the node's job notes: root's file in root's directory
      String notes = Files.readString(events);
      assertTrue(
          notes.contains("job=" + job1 + " user=nobody") && notes.contains("event=start"), notes);
      assertTrue(notes.contains("job=" + job1 + " user=nobody event=end"), notes);
      assertEquals(0, (int) Files.getAttribute(events, "unix:uid"));
      assertEquals(
          "rwxr-xr-x",
          PosixFilePermissions.toString(Files.getPosixFilePermissions(events.getParent())));

      // job 3: a plain sbatch job, no cudawatch run: a node agent follows its slurm-%j.out and
      // knows the job from the path, and its stderr file (named by nothing but -e) from the
      // prolog's sidecar
      String job3 = plainJobAttributedBySidecar(slurm, pipeline, env, home, sidecars, traceback);

      // job 2: its log directory (and the node's notes directory) vanish before the epilog
      Path go = home.resolve("go");
      Path script2 = home.resolve("wait.sh");
      Files.writeString(
          script2,
          """
          #!/bin/bash
          for i in $(seq 600); do [ -e "$HOME/go" ] && exit 0; sleep 0.1; done
          exit 3
          """);
      String job2 =
          slurm.sbatchAs(
              NOBODY,
              NOGROUP,
              env,
              script2,
              "--ntasks=1",
              "--chdir=" + home,
              "--output=" + home + "/slurm-%j.out");
      await(
          () -> Files.isDirectory(logRoot.resolve(job2)),
          60,
          "the prolog to make job 2's directory");
      deleteTree(logRoot.resolve(job2));
      deleteTree(events.getParent());
      Files.writeString(go, "");
      assertEquals("COMPLETED", slurm.awaitJobEnd(job2, 120));
      assertNodeUsable(slurm);
      assertTrue(Files.readString(events).contains("job=" + job2 + " user=nobody event=end"));
      assertFalse(
          slurm.log("slurmd").contains("error: [job " + job2 + "] epilog failed"),
          slurm.log("slurmd"));
      System.out.println(
          "slurm: job "
              + job1
              + " "
              + state1
              + ", job "
              + job2
              + " COMPLETED without its log directory; node "
              + slurm.nodeState()
              + "; records of job "
              + job1
              + ": "
              + mine.size()
              + "; plain job "
              + job3
              + " attributed through its sidecar");
    }
  }

  private String plainJobAttributedBySidecar(
      SlurmCluster slurm,
      LocalCluster pipeline,
      Map<String, String> env,
      Path home,
      Path sidecars,
      Path traceback)
      throws Exception {
    Path out = Files.createDirectories(home.resolve("plain"));
    Files.setOwner(
        out, out.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody"));
    AgentSettings settings =
        AgentSettings.builder()
            .kafka(
                new KafkaSettings(
                    pipeline.bootstrapServers(),
                    Map.of())) // as deploy/slurm/agent.yaml: no glob, the sidecars' paths
            .stateDir(tmp.resolve("agent-state").toString())
            .kernelLog(null)
            .gpuSampleIntervalMs(0)
            .httpPort(-1)
            .slurm(
                new SlurmSourceSettings(
                    true, sidecars.toString(), null, "", slurm.node(), null, null, true, null))
            .kubernetes(new KubernetesSourceSettings(false, null, null, null, null))
            .build();
    Path script = home.resolve("plain.sh");
    Files.writeString(
        script,
        """
        #!/bin/bash
        echo "step 1 loss 0.5"
        cat "$HOME/traceback.log" >&2
        exit 1
        """);
    try (AgentRuntime agent = new AgentRuntime(settings, java.time.Clock.systemUTC())) {
      agent.start(false);
      String job =
          slurm.sbatchAs(
              NOBODY,
              NOGROUP,
              env,
              script,
              "--ntasks=1",
              "--chdir=" + home,
              "--output=" + out + "/slurm-%j.out",
              "--error=" + out + "/errors-%j.txt");
      assertEquals("FAILED", slurm.awaitJobEnd(job, 120));
      // the prolog's sidecar: root's file in root's directory, the job's expanded output paths
      Path sidecar = sidecars.resolve(job + ".json");
      assertTrue(Files.exists(sidecar, LinkOption.NOFOLLOW_LINKS), "no sidecar " + sidecar);
      assertEquals(0, (int) Files.getAttribute(sidecar, "unix:uid"));
      JsonNode side = WireJson.mapper().readTree(Files.readString(sidecar));
      assertEquals(job, side.path("job_id").asText(), side.toString());
      assertEquals("nobody", side.path("user").asText(), side.toString());
      assertEquals(NOBODY, side.path("uid").asInt(-1), side.toString());
      assertEquals(slurm.node(), side.path("node").asText(), side.toString());
      assertEquals(out + "/errors-" + job + ".txt", side.path("std_err").asText(), side.toString());
      assertEquals(out + "/slurm-" + job + ".out", side.path("std_out").asText(), side.toString());

      // the agent's records: the job from the path pattern and from the sidecar
      List<LogRecord> records = new ArrayList<>();
      String firstTraceLine = Files.readAllLines(traceback).get(0);
      await(
          () -> {
            records.addAll(poll(pipeline.bootstrapServers()));
            return records.stream().anyMatch(r -> r.source().endsWith("slurm-" + job + ".out"))
                && records.stream().anyMatch(r -> r.source().endsWith("errors-" + job + ".txt"));
          },
          60,
          "the plain job's records");
      LogRecord stdout =
          records.stream()
              .filter(r -> r.source().endsWith("slurm-" + job + ".out"))
              .findFirst()
              .orElseThrow();
      assertEquals(job, stdout.job());
      assertEquals("slurm path pattern slurm-%j.out", stdout.attribution().get("job"));
      LogRecord stderr =
          records.stream()
              .filter(r -> r.source().endsWith("errors-" + job + ".txt"))
              .filter(r -> r.text().equals(firstTraceLine))
              .findFirst()
              .orElseThrow(() -> new AssertionError("no traceback line in " + records));
      assertEquals(job, stderr.job());
      assertEquals("slurm sidecar (std_err)", stderr.attribution().get("job"));

      // and the incident the pipeline raises from the plain file names the job
      String base = "http://127.0.0.1:" + pipeline.httpPort();
      await(
          () -> get(base + "/api/incidents?job=" + job).contains("illegal_memory_access"),
          60,
          "the plain job's incident");
      return job;
    }
  }

  /**
   * Copies what the job's user executes (bin/cudawatch, deploy/slurm/cudawatch-srun, the agent jar)
   * to {@code home} in the repository's layout, world-readable: the clone itself may sit in a 0700
   * home directory (as Debian 12 makes them) that the job's user cannot enter. The test's temporary
   * directory removes it.
   */
  private static Path stageForJobs(Path home) throws Exception {
    Files.createDirectories(home);
    for (String f :
        List.of(
            "bin/cudawatch", "deploy/slurm/cudawatch-srun", "ingest/target/cudawatch-agent.jar")) {
      Path rel = Path.of(f);
      Path d = home;
      for (int i = 0; i < rel.getNameCount() - 1; i++) {
        d = Files.createDirectories(d.resolve(rel.getName(i).toString()));
        SlurmCluster.openUp(d);
      }
      Path to = d.resolve(rel.getFileName().toString());
      Files.copy(REPO.resolve(f), to);
      Files.setPosixFilePermissions(
          to, PosixFilePermissions.fromString(f.endsWith(".jar") ? "rw-r--r--" : "rwxr-xr-x"));
    }
    SlurmCluster.openUp(home);
    return home;
  }

  private static void assertNodeUsable(SlurmCluster slurm) throws Exception {
    Map<String, String> node = slurm.nodeInfo();
    String state = node.getOrDefault("State", "");
    assertFalse(
        state.contains("DRAIN") || state.contains("DOWN") || state.contains("FAIL"),
        "the node is "
            + state
            + " ("
            + node.get("Reason")
            + ")\nslurmd log:\n"
            + slurm.log("slurmd"));
    assertEquals("idle", slurm.nodeState());
  }

  private static void assertOwnedByUserOnly(Path dir) throws Exception {
    assertTrue(Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS), dir + " is the job's directory");
    try (Stream<Path> s = Files.walk(dir)) {
      for (Path p : s.toList()) {
        assertEquals(
            NOBODY,
            (int) Files.getAttribute(p, "unix:uid", LinkOption.NOFOLLOW_LINKS),
            p + " is not the user's");
      }
    }
  }

  private static void deleteTree(Path p) throws Exception {
    if (!Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    try (Stream<Path> s = Files.walk(p)) {
      for (Path q : s.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.delete(q);
      }
    }
  }

  private KafkaConsumer<byte[], byte[]> consumer;

  @org.junit.jupiter.api.AfterEach
  void closeConsumer() {
    if (consumer != null) {
      consumer.close();
    }
  }

  private List<LogRecord> poll(String bootstrap) {
    if (consumer == null) {
      Properties p = new Properties();
      p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
      p.put(ConsumerConfig.GROUP_ID_CONFIG, "slurm-it");
      p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
      consumer = new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
      consumer.subscribe(List.of(Topics.LOGS));
    }
    List<LogRecord> out = new ArrayList<>();
    for (var r : consumer.poll(Duration.ofMillis(500))) {
      try {
        out.add(WireJson.readLogRecord(r.value()));
      } catch (Exception e) {
        throw new AssertionError("unreadable record on " + Topics.LOGS, e);
      }
    }
    return out;
  }

  private String get(String url) {
    try {
      return http.send(
              HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString())
          .body();
    } catch (Exception e) {
      return "";
    }
  }

  /** Waits for the state a step asserts. */
  private static void await(java.util.function.BooleanSupplier ok, long seconds, String what) {
    Await.until(what, ok, java.time.Duration.ofSeconds(seconds));
  }
}
