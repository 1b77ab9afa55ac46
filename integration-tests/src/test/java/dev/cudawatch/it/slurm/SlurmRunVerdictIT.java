package dev.cudawatch.it.slurm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The verdict where Slurm users look, on the real one-node Slurm harness: a job of an ordinary user
 * (nobody) runs its task through deploy/slurm/cudawatch-srun and dies on a real illegal-memory-
 * access traceback with Kafka down. While the task is still running, `cudawatch run` puts the
 * verdict in the job's Comment (the owner may; an Epilog cannot, see {@link SlurmEpilogVerdictIT});
 * the job's user reads it with {@code scontrol show job}, and the job's output file ends with the
 * diagnosis.
 */
class SlurmRunVerdictIT {
  private static final int NOBODY = 65534;
  private static final int NOGROUP = 65534;
  private static final Path REPO = Path.of("..").toAbsolutePath().normalize();

  @TempDir Path tmp;

  @Test
  void aFailedTasksVerdictIsInTheJobsCommentForItsUser() throws Exception {
    SlurmCluster.requireSlurm();
    Path jar = REPO.resolve("ingest/target/cudawatch-agent.jar");
    assertTrue(Files.exists(jar), jar + " is missing: build ingest first (package)");
    // a world-readable CUDAWATCH_HOME: the clone may sit in a 0700 home
    SlurmCluster.openUp(tmp);
    Path home = Files.createDirectories(tmp.resolve("cudawatch-home"));
    for (String f : List.of("bin/cudawatch", "deploy/slurm/cudawatch-srun")) {
      Files.createDirectories(home.resolve(f).getParent());
      Files.copy(REPO.resolve(f), home.resolve(f));
      Files.setPosixFilePermissions(home.resolve(f), PosixFilePermissions.fromString("rwxr-xr-x"));
    }
    Files.createDirectories(home.resolve("ingest/target"));
    Files.copy(jar, home.resolve("ingest/target/cudawatch-agent.jar"));
    SlurmCluster.openUp(home);
    Path work = Files.createDirectories(tmp.resolve("work"));
    Files.copy(REPO.resolve("samples/illegal_address_torch.log"), work.resolve("traceback.log"));
    SlurmCluster.openUp(work);
    // the job (nobody) writes its output file and spool here
    Files.setPosixFilePermissions(work, PosixFilePermissions.fromString("rwxrwxrwx"));
    Path script = work.resolve("train.sh");
    Files.writeString(
        script,
        """
        #!/bin/bash
        srun --ntasks=1 "$CUDAWATCH_HOME/deploy/slurm/cudawatch-srun" \\
          bash -c 'echo "rank $SLURM_PROCID starts"; cat traceback.log >&2; exit 1'
        """);
    Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));
    Path slurmDir = Files.createDirectories(tmp.resolve("slurm"));
    try (SlurmCluster slurm = SlurmCluster.start(slurmDir, null, null)) {
      Map<String, String> env = new HashMap<>();
      env.put("CUDAWATCH_HOME", home.toString());
      env.put("HOME", work.toString());
      env.put("CUDAWATCH_AGENT_KAFKA__BOOTSTRAP_SERVERS", "127.0.0.1:9"); // down: run spools
      env.put("CUDAWATCH_AGENT_RUN_SPOOL_ROOT", work.resolve("spool").toString());
      env.put("CUDAWATCH_URL", "http://cudawatch.example:7460");
      String job =
          slurm.sbatchAs(
              NOBODY, NOGROUP, env, script, "--chdir=" + work, "--output=" + work + "/job.out");
      String state = slurm.awaitJobEnd(job, 180);
      Path outFile = work.resolve("job.out");
      String out =
          Files.exists(outFile) ? Files.readString(outFile) : "no output: " + slurm.log("slurmd");
      assertEquals("FAILED", state, out);
      // the task's stderr ends with the diagnosis (srun's own line about the task may follow)
      int diagnosis = out.indexOf("cudawatch run: the job failed (exit_code=1)");
      assertTrue(
          diagnosis > out.indexOf("step 0: launching kernel")
              && out.contains("  incidents: http://cudawatch.example:7460/?job=" + job + "\n"),
          "the job's output, then the diagnosis: " + out);
      assertTrue(out.contains("root cause: illegal_memory_access: "), out);

      // what the job's user sees
      Process p =
          new ProcessBuilder(
                  "runuser",
                  "-u",
                  "nobody",
                  "--",
                  "env",
                  "SLURM_CONF=" + slurmDir.resolve("slurm.conf"),
                  "/usr/bin/scontrol",
                  "show",
                  "job",
                  job)
              .redirectErrorStream(true)
              .start();
      String shown = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertTrue(p.waitFor(60, TimeUnit.SECONDS));
      assertEquals(0, p.exitValue(), shown);
      assertTrue(
          shown.contains("Comment=cudawatch: illegal_memory_access: "),
          "scontrol show job, as the job's user: " + shown);
    }
  }
}
