package dev.cudawatch.it.slurm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * deploy/slurm/epilog-diagnose.sh as slurm.conf's Epilog on the real one-node Slurm harness: a job
 * of an ordinary user (nobody) dies on a real illegal-memory-access traceback; the epilog notes the
 * verdict, exits 0 and leaves the node usable, and a symlink the job planted to a root-only file
 * (holding an OOM line) is not read by root.
 *
 * <p>Not shown here, and why: the epilog cannot put the verdict in the job's AdminComment or
 * Comment; Slurm 22.05's slurmctld refuses the update ("_slurm_rpc_update_job: JobId=1 uid=0: Job
 * has already finished"): the job has ended when any Epilog runs.
 */
class SlurmEpilogVerdictIT {
  private static final int NOBODY = 65534;
  private static final int NOGROUP = 65534;
  private static final Path REPO = Path.of("..").toAbsolutePath().normalize();

  @TempDir Path tmp;

  private static String read(Path p) {
    try {
      return Files.readString(p);
    } catch (java.io.IOException e) {
      return p + ": " + e;
    }
  }

  @Test
  void theEpilogNotesTheVerdictExitsZeroAndReadsNoPlantedSymlink() throws Exception {
    SlurmCluster.requireSlurm();
    assertTrue(Files.exists(REPO.resolve("diagnosis/target/cudawatch-classify.jar")), "build it");
    SlurmCluster.openUp(tmp);
    Path etc = Files.createDirectories(tmp.resolve("etc"));
    Path logRoot = Files.createDirectories(tmp.resolve("training"));
    Files.setPosixFilePermissions(logRoot, PosixFilePermissions.fromString("rwxrwxrwx"));
    Path secret = Files.createDirectories(tmp.resolve("root-only")).resolve("secret.log");
    Files.writeString(secret, "RuntimeError: CUDA out of memory. SECRET-TOKEN-42\n");
    Files.setPosixFilePermissions(secret, PosixFilePermissions.fromString("rw-------"));
    Path epilog = etc.resolve("epilog-diagnose.sh");
    Files.copy(REPO.resolve("deploy/slurm/epilog-diagnose.sh"), epilog);
    Files.setPosixFilePermissions(epilog, PosixFilePermissions.fromString("rwxr-xr-x"));
    Files.writeString(
        etc.resolve("cudawatch-slurm.env"),
        "CUDAWATCH_BIN="
            + REPO.resolve("bin/cudawatch")
            + "\nCUDAWATCH_LOG_ROOT="
            + logRoot
            + "\nCUDAWATCH_DIAGNOSES="
            + tmp.resolve("node/diagnoses.log")
            + "\nCUDAWATCH_URL=http://cudawatch.example:7460/"
            + "\nCUDAWATCH_SCONTROL=/usr/bin/scontrol"
            // the harness's slurm.conf is not at /etc/slurm, where a node's scontrol finds it
            + "\nexport SLURM_CONF="
            + tmp.resolve("slurm/slurm.conf")
            + "\n");
    Path traceback = REPO.resolve("samples/illegal_address_torch.log");
    Path home = Files.createDirectories(tmp.resolve("home"));
    Files.copy(traceback, home.resolve("traceback.log"));
    SlurmCluster.openUp(home);
    Path script = home.resolve("train.sh");
    Files.writeString(
        script,
        """
        #!/bin/bash
        dir="%s/$SLURM_JOB_ID"
        mkdir -p "$dir"
        ln -s %s "$dir/aaa-leak.log"
        cat %s/traceback.log > "$dir/train.log"
        exit 1
        """
            .formatted(logRoot, secret, home));
    Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));
    // slurmd keeps no epilog's stderr: the wrapper does, for a failure's message
    Path wrapper = etc.resolve("epilog.sh");
    Files.writeString(
        wrapper,
        "#!/bin/bash\n"
            + epilog
            + " 2>>"
            + tmp.resolve("epilog.err")
            + "\necho rc=$? >>"
            + tmp.resolve("epilog.err")
            + "\n");
    Files.setPosixFilePermissions(wrapper, PosixFilePermissions.fromString("rwxr-xr-x"));
    try (SlurmCluster slurm =
        SlurmCluster.start(Files.createDirectories(tmp.resolve("slurm")), null, wrapper)) {
      String job =
          slurm.sbatchAs(
              NOBODY, NOGROUP, Map.of(), script, "--chdir=" + home, "--output=/dev/null");
      assertEquals("FAILED", slurm.awaitJobEnd(job, 180));
      String err = read(tmp.resolve("epilog.err"));
      assertTrue(err.contains("rc=0"), "the epilog exits 0: " + err);
      String notes = read(tmp.resolve("node/diagnoses.log"));
      assertTrue(
          notes.contains("job=" + job + " verdict=failed classes=illegal_memory_access "), notes);
      assertFalse(notes.contains("cuda_oom"), "the planted symlink was read: " + notes);
      String state = slurm.nodeState();
      assertFalse(state.contains("drain"), "the epilog drained the node: " + state);
    }
  }
}
