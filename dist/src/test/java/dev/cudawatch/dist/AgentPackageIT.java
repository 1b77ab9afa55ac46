package dev.cudawatch.dist;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.Topics;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.kafka.embedded.EmbeddedKafkaBroker;
import dev.cudawatch.testkit.Await;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The Debian packages on this machine, as an admin uses them ({@code apt-get install ./...deb}; we
 * are root): installed twice and reinstalled; {@code cudawatch} on the PATH; the agent started as
 * the installed unit says (its ExecStart, User=, Environment= and capabilities, under setpriv: no
 * systemd runs here) with the installed /etc/cudawatch/agent.yaml ships a job log from another
 * user's 0700 home, named by a Slurm sidecar, to a real broker; then remove stops it and purge
 * leaves no configuration, state or spool. Cleans up (purge, kill) even when it fails.
 */
class AgentPackageIT {
  static final List<String> APT =
      List.of("apt-get", "-y", "-q", "-o", "DPkg::Lock::Timeout=300", "--no-install-recommends");

  final List<Path> toDelete = new ArrayList<>();
  Process agent;

  @AfterEach
  void cleanUp() throws Exception {
    if (agent != null && agent.isAlive()) {
      agent.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
    Cmd.run(apt("purge", "cudawatch", "cudawatch-agent"));
    for (Path p : toDelete) {
      deleteTree(p);
    }
  }

  @Test
  void installRunAsTheUnitRemoveAndPurge() throws Exception {
    assertEquals("root", System.getProperty("user.name"), "installing packages needs root");
    Path agentDeb = Cmd.artifact("cudawatch-agent_", "_amd64.deb");
    Path serverDeb = Cmd.artifact("cudawatch_", "_amd64.deb");
    Cmd.run(apt("purge", "cudawatch", "cudawatch-agent"));

    // installs; a second install and a reinstall (its maintainer scripts again) succeed too
    aptOk("install", agentDeb.toString());
    aptOk("install", agentDeb.toString());
    aptOk("install", "--reinstall", agentDeb.toString());
    String status = Cmd.ok("dpkg-query", "-W", "-f=${Status}|${Conffiles}", "cudawatch-agent");
    assertTrue(status.startsWith("install ok installed|"), status);
    assertTrue(
        status.contains(" /etc/cudawatch/agent.yaml "), "the config is a conffile: " + status);

    // cudawatch from PATH, through /usr/bin's link, on the bundled runtime (no JAVA_HOME)
    Cmd version =
        Cmd.run(
            List.of("cudawatch", "--version"),
            null,
            Map.of("PATH", "/usr/bin:/bin"),
            Duration.ofMinutes(1));
    assertEquals(0, version.status(), version.out());
    assertTrue(version.out().startsWith("cudawatch " + Cmd.VERSION), version.out());

    // the user, group, state and spool directories the postinst made
    assertTrue(Cmd.ok("getent", "passwd", "cudawatch").contains(":/var/lib/cudawatch:"));
    assertEquals(
        "cudawatch:cudawatch 755", Cmd.ok("stat", "-c", "%U:%G %a", "/var/lib/cudawatch").strip());
    assertEquals(
        "root:cudawatch 3773",
        Cmd.ok("stat", "-c", "%U:%G %a", "/var/spool/cudawatch/run").strip());

    Unit unit = Unit.read(Path.of("/lib/systemd/system/cudawatch-agent.service"));
    assertEquals("cudawatch", unit.user());
    assertEquals("/usr/bin/cudawatch", unit.execStart().get(0));

    // a job's output in another user's 0700 home: the agent's user reads it only with the unit's
    // capabilities
    Path base = Files.createTempDirectory("cudawatch-dist-it-");
    toDelete.add(base);
    Files.setPosixFilePermissions(base, PosixFilePermissions.fromString("rwxr-xr-x"));
    String job = String.valueOf(900_000 + ProcessHandle.current().pid() % 99_999);
    Path home = Files.createDirectory(base.resolve("home"));
    Path log = home.resolve("slurm-" + job + ".out");
    String marker = "cudawatch-dist-it " + Instant.now();
    Files.writeString(
        log,
        "step 1 loss 2.5\n"
            + marker
            + " RuntimeError: CUDA error: an illegal memory access was encountered\n");
    Cmd.ok("chown", "-R", "nobody:nogroup", home.toString());
    Cmd.ok("chmod", "0700", home.toString());
    Cmd.ok("chmod", "0600", log.toString());
    assertNotEquals(
        0, asAgent(List.of(), "cat", log.toString()).status(), "read without capabilities");
    assertEquals(0, asAgent(unit.capabilities(), "cat", log.toString()).status());
    // and another user's /proc/PID/environ, where the agent finds a log writer's job and rank
    Process other =
        new ProcessBuilder(
                "setpriv",
                "--reuid",
                "nobody",
                "--regid",
                "nogroup",
                "--clear-groups",
                "sleep",
                "600")
            .start();
    try {
      String environ = "/proc/" + other.pid() + "/environ";
      Await.until(
          "the sleeper runs as nobody",
          () -> Cmd.ok("stat", "-c", "%U", "/proc/" + other.pid()).strip(),
          "nobody"::equals,
          Duration.ofSeconds(30));
      assertNotEquals(0, asAgent(List.of(), "head", "-c1", environ).status());
      assertEquals(0, asAgent(unit.capabilities(), "head", "-c1", environ).status());
    } finally {
      other.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }

    // the sidecar the prolog writes for the job: this node, the job's user, its output path
    Path sidecars = Files.createDirectory(base.resolve("sidecars"));
    Files.writeString(
        sidecars.resolve(job + ".json"),
        String.format(
            "{\"job_id\":\"%s\",\"array_job\":null,\"user\":\"nobody\",\"node\":\"dist-it\",\"gpus\":[],"
                + "\"std_out\":\"%s\",\"std_err\":\"%s\",\"work_dir\":\"%s\",\"gpus_from\":null,"
                + "\"uid\":65534,\"written\":\"%s\"}%n",
            job, log, log, home, Instant.now()));

    try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start(base.resolve("kafka"))) {
      broker.createTopics(Topics.ALL, 1);
      Map<String, String> env = new HashMap<>(unit.environment());
      env.put("PATH", "/usr/bin:/bin");
      env.put("CUDAWATCH_AGENT_KAFKA__BOOTSTRAP_SERVERS", broker.bootstrapServers());
      env.put("CUDAWATCH_AGENT_HTTP_PORT", String.valueOf(EmbeddedKafkaBroker.freePort()));
      env.put("CUDAWATCH_AGENT_SLURM__SIDECAR_DIR", sidecars.toString());
      env.put("CUDAWATCH_AGENT_SLURM__NODE_NAME", "dist-it");
      Path out = base.resolve("agent.out");
      List<String> command = new ArrayList<>(setpriv(unit.capabilities()));
      command.add("env");
      command.add("-i");
      env.forEach((k, v) -> command.add(k + "=" + v));
      command.addAll(unit.execStart());
      agent =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(out.toFile())
              .start();

      LogRecord shipped = awaitLine(broker, marker, agent, out);
      assertEquals(job, shipped.job(), "the sidecar's job");

      // the server side on top: same version, its configs valid
      aptOk("install", serverDeb.toString());
      Cmd checked =
          Cmd.run(
              List.of(
                  "cudawatch",
                  "check",
                  "/etc/cudawatch/agent.yaml",
                  "/etc/cudawatch/alerts.yaml",
                  "/etc/cudawatch/processor.yaml"),
              null,
              Map.of("PATH", "/usr/bin:/bin"),
              Duration.ofMinutes(2));
      assertEquals(0, checked.status(), checked.out());

      // remove: the running agent is stopped (no systemd here: the prerm stops the package's
      // java run by cudawatch), the files go, the conffile stays
      aptOk("remove", "cudawatch", "cudawatch-agent");
      Await.until(
          "the agent stopped by the removal", () -> !agent.isAlive(), Duration.ofSeconds(60));
      assertEquals(List.of(), processesUnder("/usr/lib/cudawatch/"));
      assertFalse(Files.exists(Path.of("/usr/lib/cudawatch/runtime")));
      assertFalse(Files.exists(Path.of("/usr/bin/cudawatch")));
      assertTrue(Files.exists(Path.of("/etc/cudawatch/agent.yaml")), "remove keeps the conffile");

      aptOk("purge", "cudawatch", "cudawatch-agent");
      for (String gone : List.of("/etc/cudawatch", "/var/lib/cudawatch", "/var/spool/cudawatch")) {
        assertFalse(Files.exists(Path.of(gone)), gone + " left after purge");
      }
    }
  }

  static LogRecord awaitLine(EmbeddedKafkaBroker broker, String marker, Process agent, Path out)
      throws Exception {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
    p.put(ConsumerConfig.GROUP_ID_CONFIG, "dist-it");
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
      consumer.subscribe(List.of(Topics.LOGS));
      List<LogRecord> seen = new ArrayList<>();
      return Await.until(
          "the job log's line on " + Topics.LOGS,
          () -> {
            if (!agent.isAlive()) {
              throw new AssertionError(
                  "the agent exited " + agent.exitValue() + ":\n" + Files.readString(out));
            }
            for (var r : consumer.poll(Duration.ofMillis(200))) {
              seen.add(WireJson.readLogRecord(r.value()));
            }
            return seen.stream()
                .filter(r -> r.text() != null && r.text().contains(marker))
                .findFirst()
                .orElse(null);
          },
          r -> r != null,
          Duration.ofMinutes(3));
    }
  }

  /** setpriv as the unit's user with exactly {@code caps} (e.g. "syslog") inherited and ambient. */
  static List<String> setpriv(List<String> caps) {
    List<String> c =
        new ArrayList<>(
            List.of("setpriv", "--reuid", "cudawatch", "--regid", "cudawatch", "--init-groups"));
    if (!caps.isEmpty()) {
      String set = String.join(",", caps.stream().map(x -> "+" + x).toList());
      c.addAll(List.of("--inh-caps", set, "--ambient-caps", set, "--bounding-set", "-all," + set));
    } else {
      c.addAll(List.of("--inh-caps", "-all", "--bounding-set", "-all"));
    }
    return c;
  }

  static Cmd asAgent(List<String> caps, String... command) throws Exception {
    List<String> c = new ArrayList<>(setpriv(caps));
    c.addAll(List.of(command));
    return Cmd.run(c, null, Map.of("PATH", "/usr/bin:/bin"), Duration.ofSeconds(30));
  }

  static List<String> apt(String... args) {
    List<String> c = new ArrayList<>(APT);
    c.addAll(List.of(args));
    return c;
  }

  static void aptOk(String... args) throws Exception {
    Cmd c = Cmd.run(apt(args), null, aptEnv(), Duration.ofMinutes(5));
    assertEquals(0, c.status(), "apt-get " + String.join(" ", args) + ":\n" + c.out());
    assertFalse(c.out().contains("cudawatch-agent: cannot"), c.out());
  }

  static Map<String, String> aptEnv() {
    return Map.of(
        "PATH", "/usr/sbin:/usr/bin:/sbin:/bin", "DEBIAN_FRONTEND", "noninteractive", "LANG", "C");
  }

  /** Processes whose executable lies under {@code dir}. */
  static List<String> processesUnder(String dir) throws IOException {
    List<String> found = new ArrayList<>();
    try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
      for (Path p : procs.filter(x -> x.getFileName().toString().matches("\\d+")).toList()) {
        try {
          String exe = Files.readSymbolicLink(p.resolve("exe")).toString();
          if (exe.startsWith(dir)) {
            found.add(p.getFileName() + " " + exe);
          }
        } catch (IOException | UnsupportedOperationException gone) {
          // a kernel thread, or a process that ended meanwhile
        }
      }
    }
    return found;
  }

  static void deleteTree(Path root) throws IOException {
    if (!Files.exists(root)) {
      return;
    }
    try (Stream<Path> all = Files.walk(root)) {
      for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }

  /** What the test takes from the installed unit file: how systemd would start the agent. */
  record Unit(
      String user,
      List<String> execStart,
      List<String> capabilities,
      Map<String, String> environment) {
    static Unit read(Path file) throws IOException {
      String user = null;
      List<String> exec = List.of();
      List<String> caps = new ArrayList<>();
      Map<String, String> env = new HashMap<>();
      for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
        int eq = line.indexOf('=');
        if (line.startsWith("#") || eq < 0) {
          continue;
        }
        String key = line.substring(0, eq).strip();
        String value = line.substring(eq + 1).strip();
        switch (key) {
          case "User" -> user = value;
          case "ExecStart" -> exec = List.of(value.split("\\s+"));
          case "AmbientCapabilities" -> {
            for (String cap : value.split("\\s+")) {
              caps.add(cap.toLowerCase().replaceFirst("^cap_", ""));
            }
          }
          case "Environment" -> {
            int e = value.indexOf('=');
            env.put(value.substring(0, e), value.substring(e + 1));
          }
          default -> {}
        }
      }
      return new Unit(user, exec, caps, env);
    }
  }
}
