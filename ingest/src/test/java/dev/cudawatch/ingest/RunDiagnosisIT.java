package dev.cudawatch.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.Topics;
import dev.cudawatch.kafka.embedded.KafkaBrokerExtension;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * `cudawatch run` tells the researcher why the job died: the real `run` process wraps a job that
 * writes a real CUDA failure (samples/illegal_address_torch.log) and exits non-zero; its stderr is
 * the job's, then cudawatch's diagnosis (class, line, next steps, the incidents link). A healthy
 * job, a failure with nothing the catalog knows and a run with the diagnosis turned off get exactly
 * the job's stderr. In a Slurm job the verdict goes to the job's Comment through scontrol, which
 * here is a script recording its arguments (the real Slurm harness: launcher's SlurmRunVerdictIT),
 * and a scontrol that hangs holds `run` no longer than the diagnosis' deadline.
 */
class RunDiagnosisIT {
  private static final Path SAMPLE =
      Path.of("..", "samples", "illegal_address_torch.log").toAbsolutePath().normalize();

  // a broker that is up: `run` has nothing of its own to say about shipping
  @RegisterExtension
  static final KafkaBrokerExtension BROKER = new KafkaBrokerExtension(Topics.ALL, 1);

  @TempDir Path dir;

  @Test
  void aFailedJobEndsWithTheDiagnosisOnItsStderrAndKeepsItsStatus() throws Exception {
    String sample = Files.readString(SAMPLE);
    Result r =
        run(
            job("seq 3; cat " + SAMPLE + " >&2; exit 1"),
            Map.of("CUDAWATCH_URL", "http://alerts.example:7460/"),
            "--job=train-7");
    assertEquals(1, r.exit, "the job's status");
    assertEquals("1\n2\n3\n", r.stdout, "the job's stdout, untouched");
    assertTrue(r.stderr.startsWith(sample), "the job's stderr first, unchanged: " + r.stderr);
    List<String> ours = r.stderr.substring(sample.length()).lines().toList();
    assertEquals(
        "cudawatch run: the job failed (exit_code=1); cudawatch's diagnosis:",
        ours.get(0),
        r.stderr);
    assertTrue(ours.get(1).startsWith("  root cause: illegal_memory_access: "), r.stderr);
    assertEquals(
        "  line 5 of stderr: torch.AcceleratorError: CUDA error: an illegal memory access was"
            + " encountered",
        ours.get(2),
        "the job's own line, numbered as the job's");
    assertTrue(ours.get(3).startsWith("  next: ") && ours.get(3).contains("CUDA_LAUNCH_BLOCKING"));
    assertEquals(
        "  incidents: http://alerts.example:7460/?job=train-7",
        ours.get(ours.size() - 1),
        "the service's list of the job's incidents is the last line");
  }

  @Test
  void aJobKilledByASignalIsDiagnosedWithItsSignal() throws Exception {
    // 3 MiB of stdout after the failure, more than `run` keeps of a stream: stderr is kept apart
    Result r = run(job("cat " + SAMPLE + " >&2; seq 400000; kill -SEGV $$"), Map.of());
    assertEquals(128 + 11, r.exit, "the job's status");
    assertTrue(r.stderr.contains("the job failed (signal=11 (SIGSEGV)"), r.stderr);
    assertTrue(r.stderr.contains("  root cause: illegal_memory_access: "), r.stderr);
    assertTrue(!r.stderr.contains("incidents:"), "no service known, no link: " + r.stderr);
  }

  @Test
  void aHealthyJobGetsNothingEvenWithAnErrorInItsOutput() throws Exception {
    Result r = run(job("cat " + SAMPLE + " >&2; exit 0"), Map.of());
    assertEquals(0, r.exit);
    assertEquals(Files.readString(SAMPLE), r.stderr, "exactly the job's stderr");
  }

  @Test
  void aFailureWithNothingRecognisableGetsNothing() throws Exception {
    Result r = run(job("seq 1000; echo 'loss went to nan, giving up' >&2; exit 3"), Map.of());
    assertEquals(3, r.exit);
    assertEquals("loss went to nan, giving up\n", r.stderr, "exactly the job's stderr");
  }

  @Test
  void theDiagnosisCanBeTurnedOff() throws Exception {
    String sample = Files.readString(SAMPLE);
    Result off = run(job("cat " + SAMPLE + " >&2; exit 1"), Map.of(), "--no-diagnosis");
    assertEquals(1, off.exit);
    assertEquals(sample, off.stderr, "--no-diagnosis: exactly the job's stderr");
    Result env = run(job("cat " + SAMPLE + " >&2; exit 1"), Map.of("CUDAWATCH_RUN_DIAGNOSIS", "0"));
    assertEquals(1, env.exit);
    assertEquals(sample, env.stderr, "CUDAWATCH_RUN_DIAGNOSIS=0: exactly the job's stderr");
  }

  @Test
  void inASlurmJobTheFirstVerdictGoesToTheJobsComment() throws Exception {
    Path calls = dir.resolve("scontrol.calls");
    Path scontrol =
        script(
            "scontrol",
            "printf '%s\\n' \"$*\" >> "
                + calls
                + "\ncase \"$*\" in *show*) echo 'JobId=77 JobName=train UserId=u(1) Comment=(null)"
                + " StdErr=/x' ;; esac\n");
    Map<String, String> env =
        Map.of("SLURM_JOB_ID", "77", "CUDAWATCH_SCONTROL", scontrol.toString());
    Result r = run(job("cat " + SAMPLE + " >&2; exit 1"), env);
    assertEquals(1, r.exit);
    List<String> lines = Files.readAllLines(calls);
    assertEquals("-o show job 77", lines.get(0), "it looks before it writes: " + lines);
    assertTrue(
        lines.get(1).startsWith("update JobId=77 Comment=cudawatch: illegal_memory_access: "),
        lines.toString());

    // another task wrote it first: it stays
    Files.delete(calls);
    Path taken =
        script(
            "scontrol2",
            "printf '%s\\n' \"$*\" >> "
                + calls
                + "\necho 'JobId=77 Comment=cudawatch: cuda_oom: out of memory StdErr=/x'\n");
    run(
        job("cat " + SAMPLE + " >&2; exit 1"),
        Map.of("SLURM_JOB_ID", "77", "CUDAWATCH_SCONTROL", taken.toString()));
    assertEquals(List.of("-o show job 77"), Files.readAllLines(calls), "no second verdict");
  }

  @Test
  void aHangingScontrolHoldsRunNoLongerThanTheDeadline() throws Exception {
    Path scontrol = script("scontrol", "exec sleep 600\n");
    long t0 = System.nanoTime();
    Result r =
        run(
            job("cat " + SAMPLE + " >&2; exit 1"),
            Map.of(
                "SLURM_JOB_ID", "78",
                "CUDAWATCH_SCONTROL", scontrol.toString(),
                "CUDAWATCH_RUN_DIAGNOSIS_SECONDS", "2"));
    long ms = (System.nanoTime() - t0) / 1_000_000;
    assertEquals(1, r.exit, "the job's status, whatever scontrol does");
    assertTrue(r.stderr.contains("root cause: illegal_memory_access"), r.stderr);
    // 2 s of deadline, a JVM's start and a loaded machine's slack: far below scontrol's 600 s
    assertTrue(ms < 60_000, "run left after " + ms + " ms");
  }

  private record Result(int exit, String stdout, String stderr) {}

  private List<String> job(String script) {
    return List.of("sh", "-c", script);
  }

  private Path script(String name, String body) throws IOException {
    Path p = dir.resolve(name);
    Files.writeString(p, "#!/bin/sh\n" + body);
    Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
    return p;
  }

  private Result run(List<String> command, Map<String, String> env, String... opts)
      throws Exception {
    Path config = dir.resolve("agent.yaml");
    Files.writeString(
        config,
        "state_dir: " + dir.resolve("state") + "\nrun_spool_root: " + dir.resolve("spools") + "\n");
    Path out = Files.createTempFile(dir, "run", ".out");
    Path err = Files.createTempFile(dir, "run", ".err");
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Xmx128m");
    cmd.add("-Dlog4j2.configurationFile=classpath:log4j2.json");
    cmd.addAll(
        List.of(
            "-cp",
            System.getProperty("java.class.path"),
            RunMain.class.getName(),
            "--config",
            config.toString(),
            "--bootstrap-servers",
            BROKER.bootstrapServers(),
            "--drain-seconds=30"));
    cmd.addAll(List.of(opts));
    cmd.add("--");
    cmd.addAll(command);
    ProcessBuilder pb =
        new ProcessBuilder(cmd)
            .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
            .redirectOutput(out.toFile())
            .redirectError(err.toFile());
    Map<String, String> e = new HashMap<>(env);
    pb.environment().remove("CUDAWATCH_URL");
    pb.environment().remove("SLURM_JOB_ID");
    pb.environment().putAll(e);
    Process p = pb.start();
    assertTrue(p.waitFor(300, TimeUnit.SECONDS), "run ends");
    return new Result(p.exitValue(), Files.readString(out), Files.readString(err));
  }
}
