package dev.cudawatch.ingest;

import java.net.InetAddress;
import java.util.Map;

/** What the node and the scheduler tell about where a job runs. */
public final class NodeEnvironment {
  private NodeEnvironment() {}

  public static String hostname() {
    String h = System.getenv("HOSTNAME");
    if (h != null && !h.isBlank()) {
      return h;
    }
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (java.io.IOException e) {
      return "localhost";
    }
  }

  /** The job id from Slurm, torchelastic or Kubernetes, or null. */
  public static String jobId(Map<String, String> env) {
    for (String k :
        new String[] {"SLURM_JOB_ID", "TORCHELASTIC_RUN_ID", "KUBERNETES_POD_NAME", "POD_NAME"}) {
      String v = env.get(k);
      if (v != null && !v.isBlank()) {
        return v;
      }
    }
    return null;
  }

  /**
   * The task's global rank: torchrun's RANK, else Slurm's SLURM_PROCID (a task started by srun),
   * else Open MPI's OMPI_COMM_WORLD_RANK; null outside a distributed job.
   */
  public static Integer rank(Map<String, String> env) {
    return firstInt(env, "RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK");
  }

  /** The task's rank on its node: LOCAL_RANK, SLURM_LOCALID or OMPI_COMM_WORLD_LOCAL_RANK. */
  public static Integer localRank(Map<String, String> env) {
    return firstInt(env, "LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK");
  }

  private static Integer firstInt(Map<String, String> env, String... keys) {
    for (String k : keys) {
      Integer v = intEnv(env, k);
      if (v != null) {
        return v;
      }
    }
    return null;
  }

  public static Integer intEnv(Map<String, String> env, String k) {
    try {
      return env.containsKey(k) ? Integer.valueOf(env.get(k).strip()) : null;
    } catch (NumberFormatException e) {
      return null;
    }
  }
}
