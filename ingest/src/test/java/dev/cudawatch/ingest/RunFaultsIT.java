package dev.cudawatch.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.Topics;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.kafka.embedded.EmbeddedKafkaBroker;
import dev.cudawatch.kafka.embedded.KafkaBrokerExtension;
import dev.cudawatch.kafka.embedded.TopicReader;
import dev.cudawatch.testkit.Await;
import dev.cudawatch.testkit.Tmpfs;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * `cudawatch run` never hurts the job it wraps. Each fault is real (a hanging nvidia-smi on PATH,
 * an unresolvable or refusing broker, real signals, a child left holding the pipe, a tmpfs filled
 * to the last byte, a heap too small for a line) and each case asserts what the job sees: every
 * byte of its output unchanged, its exact status, `run` gone within {@link #AFTER_CHILD} of the
 * job's end ({@link #AFTER_SIGNAL} of a stop signal), and at most two lines of cudawatch's own on
 * its stderr: never the Kafka client's logging.
 */
class RunFaultsIT {
  @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();

  /** `run` waits 1 s for the pipes and 1 s for Kafka; the rest is a loaded machine's slack. */
  private static final Duration AFTER_CHILD = Duration.ofMillis(3_000);

  private static final Duration AFTER_SIGNAL = Duration.ofSeconds(5);
  private static final String MIB_OF_LINES = "seq 150000"; // 1.0 MiB: 16 pipes' worth
  @TempDir Path dir;

  /** A port nothing listens on: the broker refuses connections. */
  private String refused;

  @BeforeEach
  void refusingBroker() throws IOException {
    refused = "127.0.0.1:" + EmbeddedKafkaBroker.freePort();
  }

  @Test
  void aHangingNvidiaSmiNeitherDelaysNorBlocksTheJob() throws Exception {
    Path bin = Files.createDirectories(dir.resolve("bin"));
    Path smi = bin.resolve("nvidia-smi");
    Files.writeString(smi, "#!/bin/sh\nexec sleep 600\n"); // a wedged GPU: nvidia-smi never answers
    Files.setPosixFilePermissions(smi, PosixFilePermissions.fromString("rwxr-xr-x"));
    Map<String, String> env = new HashMap<>();
    env.put("PATH", bin + ":" + System.getenv("PATH"));
    env.put("CUDA_VISIBLE_DEVICES", "GPU-8a1d2c3e"); // a UUID: `run` needs nvidia-smi's list
    Result r = run(config(dir.resolve("spools")), refused, job(MIB_OF_LINES, 0), env);
    r.assertUnharmed(0, sha256OfSeq(150_000), AFTER_CHILD);
    assertTrue(r.elapsedMs < 60_000, "the job's output never waited for nvidia-smi: " + r);
  }

  @Test
  void anUnresolvableKafkaHostStillPassesEveryLineAndTheStatus() throws Exception {
    Result r =
        run(config(dir.resolve("spools")), "nosuch.invalid:9092", job("seq 1000000; sleep 3", 7));
    r.assertUnharmed(7, sha256OfSeq(1_000_000), AFTER_CHILD);
    assertEquals(1, count(r.stderr, "Kafka unavailable"), "reported once: " + r.stderr);
    assertTrue(r.stderr.contains("stays spooled in"), "the closing line says where: " + r.stderr);
  }

  @Test
  void aBrokerRefusingConnectionsWritesNothingIntoTheJobsStderr() throws Exception {
    // the job runs long enough for Kafka's client to retry many times (about 2.5 warnings a second
    // went into the job's stderr before)
    Result r = run(config(dir.resolve("spools")), refused, job("seq 50000; sleep 4", 0), Map.of());
    r.assertUnharmed(0, sha256OfSeq(50_000), AFTER_CHILD);
    assertTrue(r.stderr.contains("stays spooled in"), "the closing line says where: " + r.stderr);
  }

  @Test
  void aChildLeftHoldingStdoutDoesNotKeepRunAlive() throws Exception {
    Result r =
        run(
            config(dir.resolve("spools")),
            refused,
            List.of("sh", "-c", "sleep 25 & seq 1000; touch " + dir.resolve("exited") + "; exit 3"),
            Map.of());
    r.assertUnharmed(3, sha256OfSeq(1_000), AFTER_CHILD);
  }

  @Test
  void aFullDiskUnderTheSpoolNeverStopsTheJob() throws Exception {
    Path full = dir.resolve("full");
    try (Tmpfs disk = Tmpfs.mount(full, "1m")) {
      Result r = run(config(full), refused, job("seq 1000000; sleep 3", 7));
      r.assertUnharmed(7, sha256OfSeq(1_000_000), AFTER_CHILD);
      assertEquals(1, count(r.stderr, "cannot write the spool"), "reported once: " + r.stderr);
      assertTrue(r.stderr.contains("lines of the job were not shipped"), "counted: " + r.stderr);
    }
  }

  @Test
  void anOutOfMemoryErrorInShippingNeverReachesTheJob() throws Exception {
    // one 96 MiB line, written a MiB at a time so that shipping keeps up, with lines allowed up to
    // 16 MiB, in a 24 MiB heap: framing it for shipping runs out of memory; the bytes still pass
    // through, and the lines after it too
    Path c = config(dir.resolve("spools"), "max_line_bytes: 16777216\n");
    String line =
        "for i in $(seq 96); do head -c 1048576 /dev/zero | tr '\\0' x; sleep 0.05; done;"
            + " echo; seq 1000";
    Result r = run(c, refused, job(line, 5), Map.of(), "-Xmx24m");
    MessageDigest d = MessageDigest.getInstance("SHA-256");
    byte[] xs = new byte[1 << 20];
    java.util.Arrays.fill(xs, (byte) 'x');
    for (int i = 0; i < 96; i++) {
      d.update(xs);
    }
    d.update((byte) '\n');
    for (int i = 1; i <= 1000; i++) {
      d.update((i + "\n").getBytes(StandardCharsets.US_ASCII));
    }
    r.assertUnharmed(5, HexFormat.of().formatHex(d.digest()), AFTER_CHILD);
    assertTrue(r.stderr.contains("OutOfMemoryError"), "said once: " + r.stderr);
  }

  @ParameterizedTest
  @ValueSource(strings = {"TERM", "INT", "HUP"})
  void aStopSignalReachesTheJobAndRunLeavesWithinFiveSecondsWithKafkaDown(String signal)
      throws Exception {
    Path out = dir.resolve("run.out");
    Path err = dir.resolve("run.err");
    Process run =
        start(
            config(dir.resolve("spools")),
            refused,
            // two seconds of a job before it says so: Kafka's client fails many times meanwhile
            List.of("sh", "-c", "seq 1000; sleep 2; echo started; exec sleep 600"),
            out,
            err,
            Map.of());
    Await.until(
        "the job to start",
        () -> Files.exists(out) ? Files.readString(out) : "",
        s -> s.contains("started"),
        Duration.ofSeconds(60));
    long t0 = System.nanoTime();
    new ProcessBuilder("kill", "-" + signal, Long.toString(run.pid())).start().waitFor();
    assertTrue(run.waitFor(60, TimeUnit.SECONDS), "run ends once its job has ended");
    long ms = (System.nanoTime() - t0) / 1_000_000;
    int sig = Map.of("TERM", 15, "INT", 2, "HUP", 1).get(signal);
    assertEquals(128 + sig, run.exitValue(), "the job's status: killed by SIG" + signal);
    System.out.println("run left " + ms + " ms after SIG" + signal);
    assertTrue(ms <= AFTER_SIGNAL.toMillis(), "run left " + ms + " ms after SIG" + signal);
    assertOnlyOurLines(Files.readString(err));
  }

  @Test
  void sigtermToRunReachesTheJobAndItsEndIsRecorded() throws Exception {
    EmbeddedKafkaBroker broker = KAFKA.broker();
    broker.createTopics(Topics.ALL, 1);
    Path out = dir.resolve("run.out");
    Process run =
        start(
            config(dir.resolve("spools")),
            broker.bootstrapServers(),
            List.of("sh", "-c", "echo started; exec sleep 600"),
            out,
            dir.resolve("run.err"),
            Map.of(),
            "--drain-seconds=10"); // a broker that is up: `run` leaves once all is shipped
    Await.until(
        "the job to start",
        () -> Files.exists(out) ? Files.readString(out) : "",
        s -> s.contains("started"),
        Duration.ofSeconds(60));
    run.destroy(); // SIGTERM to `run`, as Slurm and Kubernetes stop a job
    assertTrue(run.waitFor(60, TimeUnit.SECONDS), "run ends once its job has ended");
    assertEquals(128 + 15, run.exitValue(), "the job's status: killed by SIGTERM");
    List<LogRecord> exits = new ArrayList<>();
    for (byte[] b :
        TopicReader.readUntil(
            broker.bootstrapServers(),
            Topics.LOGS,
            got ->
                got.stream()
                    .anyMatch(v -> new String(v, StandardCharsets.UTF_8).contains("\"EXIT\"")),
            Duration.ZERO,
            Duration.ofSeconds(60),
            false)) {
      LogRecord rec = WireJson.readLogRecord(b);
      if (rec.kind() == RecordKind.EXIT) {
        exits.add(rec);
      }
    }
    assertEquals(1, exits.size(), "one exit record");
    assertTrue(
        exits.get(0).text().endsWith("finished with signal=15 (SIGTERM)"), exits.get(0).text());
  }

  /** What the job saw: its exit, its stdout, its stderr, and when it ended against when run did. */
  private record Result(
      int exit, String stdoutSha256, String stderr, long elapsedMs, long afterChildMs) {
    void assertUnharmed(int status, String sha, Duration afterChild) {
      // the figure for the fault table, in the test's output
      System.out.println("run left " + afterChildMs + " ms after its job; stderr: " + stderr);
      assertEquals(status, exit, "the job's exact status");
      assertEquals(sha, stdoutSha256, "every byte of the job's output, unchanged, in order");
      assertTrue(
          afterChildMs <= afterChild.toMillis(),
          "run left " + afterChildMs + " ms after its job ended");
      assertOnlyOurLines(stderr);
    }
  }

  /** The jobs here write nothing to stderr: all there is must be cudawatch's, two lines at most. */
  private static void assertOnlyOurLines(String stderr) {
    List<String> lines = stderr.lines().toList();
    assertTrue(lines.size() <= 2, "at most two lines of cudawatch's own: " + stderr);
    for (String l : lines) {
      assertTrue(l.startsWith("cudawatch run: "), "nothing but cudawatch's own lines: " + l);
    }
  }

  /** {@code script} then a marker file once it is done, then its exit status. */
  private List<String> job(String script, int status) {
    return List.of("sh", "-c", script + "; touch " + dir.resolve("exited") + "; exit " + status);
  }

  private Result run(Path config, String bootstrap, List<String> command) throws Exception {
    return run(config, bootstrap, command, Map.of());
  }

  private Result run(
      Path config, String bootstrap, List<String> command, Map<String, String> env, String... jvm)
      throws Exception {
    Path out = dir.resolve("run.out");
    Path err = dir.resolve("run.err");
    Path exited = dir.resolve("exited");
    long t0 = System.nanoTime();
    Process p = start(config, bootstrap, command, out, err, env, jvm);
    Await.until(
        "the job to end",
        () -> Files.exists(exited) || !p.isAlive(),
        b -> b,
        Duration.ofMinutes(5));
    long childEnded = System.nanoTime();
    assertTrue(p.waitFor(300, TimeUnit.SECONDS), "run ends");
    long now = System.nanoTime();
    return new Result(
        p.exitValue(),
        sha256(out),
        Files.readString(err),
        (now - t0) / 1_000_000,
        (now - childEnded) / 1_000_000);
  }

  private Process start(
      Path config,
      String bootstrap,
      List<String> command,
      Path out,
      Path err,
      Map<String, String> env,
      String... jvm)
      throws IOException { // jvm: the JVM's options, and `run`'s as --name=value
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Xmx128m");
    cmd.add("-Dlog4j2.configurationFile=classpath:log4j2.json"); // the jars' own, not the tests'

    // "--" options are `run`'s, the others the JVM's
    cmd.addAll(java.util.Arrays.stream(jvm).filter(a -> !a.startsWith("--")).toList());
    cmd.addAll(
        List.of(
            "-cp",
            System.getProperty("java.class.path"),
            RunMain.class.getName(),
            "--config",
            config.toString(),
            "--bootstrap-servers",
            bootstrap));
    cmd.addAll(java.util.Arrays.stream(jvm).filter(a -> a.startsWith("--")).toList());
    cmd.add("--");
    cmd.addAll(command);
    ProcessBuilder pb =
        new ProcessBuilder(cmd)
            .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
            .redirectOutput(out.toFile())
            .redirectError(err.toFile());
    pb.environment().putAll(env);
    return pb.start();
  }

  private Path config(Path spoolRoot) throws IOException {
    return config(spoolRoot, "");
  }

  private Path config(Path spoolRoot, String more) throws IOException {
    Path c = dir.resolve("agent.yaml");
    Files.writeString(
        c,
        "state_dir: "
            + dir.resolve("state")
            + "\nrun_spool_root: "
            + spoolRoot
            + "\nhost: n1\n"
            + more);
    return c;
  }

  private static String sha256(Path f) throws Exception {
    MessageDigest d = MessageDigest.getInstance("SHA-256");
    try (InputStream in = Files.newInputStream(f)) {
      byte[] buf = new byte[1 << 16];
      for (int n; (n = in.read(buf)) > 0; ) {
        d.update(buf, 0, n);
      }
    }
    return HexFormat.of().formatHex(d.digest());
  }

  private static String sha256OfSeq(int n) throws Exception {
    MessageDigest d = MessageDigest.getInstance("SHA-256");
    for (int i = 1; i <= n; i++) {
      d.update((i + "\n").getBytes(StandardCharsets.US_ASCII));
    }
    return HexFormat.of().formatHex(d.digest());
  }

  private static int count(String text, String what) {
    int n = 0;
    for (int i = text.indexOf(what); i >= 0; i = text.indexOf(what, i + 1)) {
      n++;
    }
    return n;
  }
}
