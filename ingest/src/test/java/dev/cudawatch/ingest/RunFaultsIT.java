package dev.cudawatch.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.Topics;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.kafka.embedded.EmbeddedKafkaBroker;
import dev.cudawatch.kafka.embedded.TopicReader;
import dev.cudawatch.testkit.Await;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * `cudawatch run` never hurts the job it wraps: whatever fails inside cudawatch (Kafka's address, a
 * full disk under the spool), every line of the job passes through unchanged and `run` exits with
 * the job's status; a SIGTERM to `run` reaches the job and its end is still recorded. Each fault is
 * real: an unresolvable host, a tmpfs filled to the last byte, a real signal.
 */
class RunFaultsIT {
  private static final List<String> MILLION_LINES = List.of("sh", "-c", "seq 1000000; exit 7");

  @TempDir Path dir;

  @Test
  void anUnresolvableKafkaHostStillPassesEveryLineAndTheStatus() throws Exception {
    Result r = run(config(dir.resolve("spools")), "nosuch.invalid:9092", MILLION_LINES);
    assertEquals(7, r.exit, "the job's status");
    assertEquals(sha256OfSeq(1_000_000), r.stdoutSha256, "every line, unchanged, in order");
    assertEquals(
        1,
        count(r.stderr, "cudawatch run: Kafka unavailable"),
        "the failure is reported once: " + r.stderr);
  }

  @Test
  void aFullDiskUnderTheSpoolNeverStopsTheJob() throws Exception {
    Path full = dir.resolve("full");
    Files.createDirectories(full);
    mountTmpfs(full, "1m");
    try {
      Result r = run(config(full), "nosuch.invalid:9092", MILLION_LINES);
      assertEquals(7, r.exit, "the job's status");
      assertEquals(sha256OfSeq(1_000_000), r.stdoutSha256, "every line, unchanged, in order");
      assertEquals(1, count(r.stderr, "cannot write the spool"), "reported once: " + r.stderr);
      assertTrue(
          r.stderr.contains("lines of the job were not shipped"), "and counted: " + r.stderr);
    } finally {
      new ProcessBuilder("umount", full.toString()).start().waitFor();
    }
  }

  @Test
  void sigtermToRunReachesTheJobAndItsEndIsRecorded() throws Exception {
    try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start(dir.resolve("kafka"))) {
      broker.createTopics(Topics.ALL, 1);
      Path out = dir.resolve("run.out");
      Process run =
          start(
              config(dir.resolve("spools")),
              broker.bootstrapServers(),
              List.of("sh", "-c", "echo started; exec sleep 600"),
              out,
              dir.resolve("run.err"));
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
  }

  private record Result(int exit, String stdoutSha256, String stderr) {}

  private Result run(Path config, String bootstrap, List<String> command) throws Exception {
    Path out = dir.resolve("run.out");
    Path err = dir.resolve("run.err");
    Process p = start(config, bootstrap, command, out, err);
    assertTrue(p.waitFor(300, TimeUnit.SECONDS), "run ends");
    return new Result(p.exitValue(), sha256(out), Files.readString(err));
  }

  private Process start(Path config, String bootstrap, List<String> command, Path out, Path err)
      throws IOException {
    List<String> cmd =
        new ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx128m",
                "-cp",
                System.getProperty("java.class.path"),
                RunMain.class.getName(),
                "--config",
                config.toString(),
                "--bootstrap-servers",
                bootstrap,
                "--drain-seconds",
                "5",
                "--"));
    cmd.addAll(command);
    return new ProcessBuilder(cmd)
        .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
        .redirectOutput(out.toFile())
        .redirectError(err.toFile())
        .start();
  }

  private Path config(Path spoolRoot) throws IOException {
    Path c = dir.resolve("agent.yaml");
    Files.writeString(
        c,
        "state_dir: " + dir.resolve("state") + "\nrun_spool_root: " + spoolRoot + "\nhost: n1\n");
    return c;
  }

  /** A real full disk: a 1 MiB tmpfs (root here and in CI; skipped elsewhere unless CI is set). */
  private static void mountTmpfs(Path at, String size) throws Exception {
    Process m =
        new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=" + size, "tmpfs", at.toString())
            .redirectErrorStream(true)
            .start();
    String why = new String(m.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    boolean mounted = m.waitFor() == 0;
    if (!mounted && System.getenv("CI") != null) {
      throw new AssertionError("cannot mount a tmpfs (CI runs as root): " + why);
    }
    Assumptions.assumeTrue(mounted, "mounting a tmpfs needs root: " + why);
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
