package dev.cudawatch.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NodeEnvironmentTest {
  @TempDir Path dir;

  @Test
  void theHostNameIsTheKernelsNotTheEnvironments() throws Exception {
    Path uts = Files.writeString(dir.resolve("hostname"), "gpu-node-7\n");
    assertEquals("gpu-node-7", NodeEnvironment.hostname(uts));
    // no such file (not Linux): the resolver library's answer, still not the environment's
    assertFalse(NodeEnvironment.hostname(dir.resolve("absent")).isBlank());
  }

  @Test
  void runIgnoresTheNodesIdentityInTheJobsEnvironment() {
    Map<String, String> env =
        RunMain.configEnvironment(
            Map.of(
                "CUDAWATCH_AGENT_HOST", "other-node",
                "CUDAWATCH_AGENT_SLURM__NODE_NAME", "other",
                "CUDAWATCH_AGENT_KAFKA__BOOTSTRAP_SERVERS", "kafka:9092"));
    assertEquals(Map.of("CUDAWATCH_AGENT_KAFKA__BOOTSTRAP_SERVERS", "kafka:9092"), env);
  }

  @Test
  void slurmTasksTakeTheirRanksFromSlurmProcidAndLocalid() {
    Map<String, String> srun =
        Map.of("SLURM_JOB_ID", "4242", "SLURM_PROCID", "3", "SLURM_LOCALID", "1");
    assertEquals(3, NodeEnvironment.rank(srun));
    assertEquals(1, NodeEnvironment.localRank(srun));
    assertEquals("4242", NodeEnvironment.jobId(srun));
  }

  @Test
  void torchrunsRanksWinOverSlurmsWhenBothAreSet() {
    // torchrun under srun: one Slurm task per node starts several ranks
    Map<String, String> env =
        Map.of("SLURM_PROCID", "0", "SLURM_LOCALID", "0", "RANK", "5", "LOCAL_RANK", "5");
    assertEquals(5, NodeEnvironment.rank(env));
    assertEquals(5, NodeEnvironment.localRank(env));
  }

  @Test
  void openMpiRanksAndNoneAtAll() {
    Map<String, String> mpi =
        Map.of("OMPI_COMM_WORLD_RANK", "7", "OMPI_COMM_WORLD_LOCAL_RANK", "2");
    assertEquals(7, NodeEnvironment.rank(mpi));
    assertEquals(2, NodeEnvironment.localRank(mpi));
    assertNull(NodeEnvironment.rank(Map.of()));
    assertNull(NodeEnvironment.localRank(Map.of("SLURM_LOCALID", "not-a-number")));
  }
}
