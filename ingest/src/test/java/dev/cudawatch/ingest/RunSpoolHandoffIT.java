package dev.cudawatch.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.cudawatch.common.Topics;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.ingest.run.RunSpools;
import dev.cudawatch.kafka.embedded.EmbeddedKafkaBroker;
import dev.cudawatch.kafka.embedded.KafkaBrokerExtension;
import dev.cudawatch.testkit.Await;
import java.io.File;
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
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The run-spool handoff between real users, as on a packaged node: a job user runs {@code cudawatch
 * run} (umask 077) while Kafka is down; another user spools under a forged host name and plants a
 * directory named for someone else; the agent runs as its own system user, a member of the handoff
 * root's group only. It adopts the job's spool while Kafka is still down, ships every line once
 * Kafka is back under its own host name, refuses and counts the planted directory, and reports
 * healthy after the spools were forwarded and removed. Everything is real: users made with useradd
 * (removed after), permissions, processes, the broker. Needs root.
 */
class RunSpoolHandoffIT {
  @RegisterExtension
  static final KafkaBrokerExtension BROKER = new KafkaBrokerExtension(Topics.ALL, 2);

  @TempDir Path tmp;
  private final HttpClient http = HttpClient.newHttpClient();

  @Test
  void aJobUsersSpoolIsShippedByTheAgentUserOnceAndAPlantedOneIsRefused() throws Exception {
    assumeTrue("root".equals(System.getProperty("user.name")), "creates users: needs root");
    Path jar = Path.of("target/cudawatch-agent.jar").toAbsolutePath();
    assertTrue(Files.exists(jar), jar + " is missing: run through verify (package first)");
    String tag = UUID.randomUUID().toString().substring(0, 6);
    String job = "cwjob" + tag;
    String mallory = "cwmal" + tag;
    String agentUser = "cwagt" + tag;
    List<String> made = new ArrayList<>();
    Process agent = null;
    try {
      for (String u : List.of(job, mallory)) {
        sh("useradd --no-create-home --shell /bin/sh " + u);
        made.add(u);
      }
      sh("useradd --system --no-create-home --shell /usr/sbin/nologin --user-group " + agentUser);
      made.add(agentUser);

      // what the users execute, where they can reach it (the clone may sit in a 0700 home)
      Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxr-xr-x"));
      Path stage = Files.createDirectories(tmp.resolve("stage"));
      Files.copy(jar, stage.resolve("cudawatch-agent.jar"));
      // the handoff root as the package makes it
      Path root = Files.createDirectories(tmp.resolve("handoff"));
      sh("chown root:" + agentUser + " " + root + " && chmod 3773 " + root);
      int deadPort = EmbeddedKafkaBroker.freePort();
      int brokerPort = BROKER.broker().brokerPort();
      BROKER.stop(); // Kafka is down until step 4, its topics already made

      // 1. the job, Kafka down
      String lines = "i=1; while [ $i -le 40 ]; do echo \"step $i loss 0.$i\"; i=$((i+1)); done";
      Process run =
          runAs(
              job,
              "run-" + job,
              runConfig(deadPort, root, "node-a"),
              "j-handoff",
              lines + "; echo 'warning: slow rank' >&2; exit 3");
      String out = new String(run.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertTrue(run.waitFor(60, TimeUnit.SECONDS));
      assertEquals(3, run.exitValue(), "the job's status");
      assertTrue(out.contains("step 40 loss 0.40"), out);
      Path jobDir = root.resolve(RunSpools.userDirName(job));
      List<Path> spools = RunSpools.all(root);
      assertEquals(1, spools.size(), "spooled under the handoff root: " + spools);
      Path spool = spools.get(0);
      assertEquals(agentUser, group(spool), "the agent's group, from the setgid root");
      assertEquals("rwxrwx---", mode(spool), "the group may read and remove it, despite umask 077");
      assertEquals("rwxrwx---", mode(jobDir));
      try (Stream<Path> segs = Files.list(spool)) {
        for (Path seg : segs.filter(p -> p.toString().endsWith(".seg")).toList()) {
          assertEquals(agentUser, group(seg));
          assertEquals("rw-r-----", mode(seg));
        }
      }

      // 2. another user: a spool of her own under a forged host, and one planted under root's name
      Process forged =
          runAs(
              mallory,
              "run-" + mallory,
              runConfig(deadPort, root, "other-node"),
              "j-mallory",
              "echo forged-1; echo forged-2; exit 0");
      forged.getInputStream().readAllBytes();
      assertTrue(forged.waitFor(60, TimeUnit.SECONDS));
      Path planted = root.resolve(RunSpools.userDirName("root")).resolve("forged-run");
      asUser(
          mallory,
          "umask 022; mkdir -p "
              + planted
              + " && cp "
              + root.resolve(RunSpools.userDirName(mallory))
              + "/*/*.seg "
              + planted
              + "/");
      assertTrue(Files.isDirectory(planted), "planted");

      // 3. the agent, as its own user, still without Kafka: it takes the spools into its own
      int httpPort = EmbeddedKafkaBroker.freePort();
      Path state = Files.createDirectories(tmp.resolve("agent-state"));
      sh("chown " + agentUser + ":" + agentUser + " " + state);
      Path agentConfig = tmp.resolve("agent.yaml");
      Files.writeString(
          agentConfig,
          "kafka:\n  bootstrap_servers: 127.0.0.1:"
              + brokerPort
              + "\nhost: node-a\nstate_dir: "
              + state
              + "\nrun_spool_root: "
              + root
              + "\ngpu_sample_interval_ms: 0\nhttp_port: "
              + httpPort
              + "\nslurm:\n  enabled: false\nkubernetes:\n  enabled: false\n");
      agent =
          new ProcessBuilder(
                  "setpriv",
                  "--reuid=" + agentUser,
                  "--regid=" + agentUser,
                  "--init-groups",
                  "--",
                  java(),
                  "-Xmx256m",
                  "-cp",
                  stage.resolve("cudawatch-agent.jar").toString(),
                  "dev.cudawatch.ingest.AgentMain",
                  "--config",
                  agentConfig.toString())
              .redirectErrorStream(true)
              .redirectOutput(tmp.resolve("agent.log").toFile())
              .redirectInput(new File("/dev/null"))
              .start();
      Await.until(
          "the job's and mallory's spools moved into the agent's, the planted one left",
          () -> {
            try {
              return RunSpools.all(root);
            } catch (Exception e) {
              return List.of();
            }
          },
          left -> left.equals(List.of(planted)),
          Duration.ofSeconds(60));
      assertFalse(Files.exists(spool, LinkOption.NOFOLLOW_LINKS), "removed after adoption");

      // 4. Kafka back: every line once, under the agent's host
      List<LogRecord> got = new ArrayList<>();
      BROKER.restart();
      try (var c = BROKER.consumer("handoff", Topics.LOGS)) {
        Await.until(
            "the job's 41 lines, mallory's 2 and both exits in Kafka",
            () -> {
              for (var r : c.poll(Duration.ofMillis(200))) {
                got.add(WireJson.readLogRecord(r.value()));
              }
              return got;
            },
            g ->
                g.stream().filter(r -> r.kind() == RecordKind.LOG).count() >= 43
                    && g.stream().filter(r -> r.kind() == RecordKind.EXIT).count() >= 2,
            Duration.ofSeconds(90));
        c.poll(Duration.ofSeconds(2)).forEach(r -> got.add(read(r.value())));
      } finally {
        BROKER.stop(); // as before: the checks below run with Kafka gone again
      }
      List<LogRecord> jobLines =
          got.stream()
              .filter(r -> "j-handoff".equals(r.job()) && r.kind() == RecordKind.LOG)
              .toList();
      assertEquals(41, jobLines.size(), "every line once: " + texts(jobLines));
      assertEquals(41, jobLines.stream().map(LogRecord::id).distinct().count());
      assertTrue(texts(jobLines).contains("step 40 loss 0.40"));
      assertTrue(texts(jobLines).contains("warning: slow rank"));
      for (LogRecord r : got) {
        assertEquals("node-a", r.host(), "the agent's host, never the segment's: " + r);
        assertTrue(r.id().startsWith("node-a:"), r.id());
        assertFalse(r.text().isEmpty() && r.kind() == RecordKind.LOG);
      }
      for (LogRecord r : jobLines) {
        assertEquals(job, r.attribution().get("spool_owner"));
      }
      List<LogRecord> malloryLines =
          got.stream()
              .filter(r -> "j-mallory".equals(r.job()) && r.kind() == RecordKind.LOG)
              .toList();
      assertEquals(List.of("forged-1", "forged-2"), texts(malloryLines).stream().sorted().toList());
      assertTrue(
          malloryLines.stream().allMatch(r -> mallory.equals(r.attribution().get("spool_owner"))));

      // 5. refused and counted; healthy after the spools were forwarded and removed
      String metrics = get(httpPort, "/metrics").body();
      assertTrue(
          metrics.contains("cudawatch_agent_run_spools_refused_total{reason=\"owner\"} 1.0"),
          metrics);
      long forgedRecords =
          got.stream().filter(r -> "j-mallory".equals(r.job())).count(); // lines, markers, exit
      assertTrue(
          metrics.contains(
              "cudawatch_agent_run_spool_host_mismatches_total " + forgedRecords + ".0"),
          forgedRecords + " records named other-node:\n" + metrics);
      assertTrue(metrics.contains("cudawatch_agent_run_spools_adopted_total 2.0"), metrics);
      HttpResponse<String> health = get(httpPort, "/healthz");
      assertEquals(200, health.statusCode(), health.body());
      assertTrue(health.body().contains("\"status\":\"ok\""), health.body());
      assertTrue(Files.isDirectory(planted), "a refused spool is left as it is");
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

  private Path runConfig(int kafkaPort, Path root, String host) throws Exception {
    Path c = tmp.resolve("run-" + host + ".yaml");
    Files.writeString(
        c,
        "kafka:\n  bootstrap_servers: 127.0.0.1:"
            + kafkaPort
            + "\nhost: "
            + host
            + "\nrun_spool_root: "
            + root
            + "\n");
    Files.setPosixFilePermissions(c, PosixFilePermissions.fromString("rw-r--r--"));
    return c;
  }

  /** `cudawatch run` as {@code user}, with the strictest usual umask. */
  private Process runAs(String user, String name, Path config, String jobId, String command)
      throws Exception {
    Path jar = tmp.resolve("stage/cudawatch-agent.jar");
    return new ProcessBuilder(
            "setpriv",
            "--reuid=" + user,
            "--regid=" + user,
            "--clear-groups",
            "--",
            "sh",
            "-c",
            "umask 077; exec \"$0\" -Xmx128m -cp \"$1\" dev.cudawatch.ingest.RunMain --config \"$2\""
                + " --job \"$3\" --drain-seconds 1 -- sh -c \"$4\"",
            java(),
            jar.toString(),
            config.toString(),
            jobId,
            command)
        .redirectErrorStream(true)
        .redirectInput(new File("/dev/null"))
        .start();
  }

  private static void asUser(String user, String script) throws Exception {
    run(
        "setpriv",
        "--reuid=" + user,
        "--regid=" + user,
        "--clear-groups",
        "--",
        "sh",
        "-c",
        script);
  }

  private static void sh(String script) throws Exception {
    run("sh", "-c", script);
  }

  private static void run(String... cmd) throws Exception {
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), String.join(" ", cmd));
    assertEquals(0, p.exitValue(), String.join(" ", cmd) + ": " + out);
  }

  private static String java() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }

  private static String group(Path p) throws Exception {
    return Files.readAttributes(p, java.nio.file.attribute.PosixFileAttributes.class)
        .group()
        .getName();
  }

  private static String mode(Path p) throws Exception {
    return PosixFilePermissions.toString(Files.getPosixFilePermissions(p));
  }

  private static List<String> texts(List<LogRecord> rs) {
    return rs.stream().map(LogRecord::text).collect(Collectors.toList());
  }

  private static LogRecord read(byte[] b) {
    try {
      return WireJson.readLogRecord(b);
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  private HttpResponse<String> get(int port, String path) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .timeout(Duration.ofSeconds(10))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }
}
