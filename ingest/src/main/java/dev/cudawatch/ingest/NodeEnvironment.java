package dev.cudawatch.ingest;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/** What the node and the scheduler tell about where a job runs. */
public final class NodeEnvironment {
  private NodeEnvironment() {}

  /** The kernel's host name (the UTS name {@code hostname} prints). */
  static final Path KERNEL_HOSTNAME = Path.of("/proc/sys/kernel/hostname");

  /**
   * This machine's host name, from the kernel, never from the environment: under {@code cudawatch
   * run} the environment is the job's, and a job must not choose the node its records (and its
   * kernel's verdicts) are about. An agent in a pod is given the node's name in its configuration
   * ({@code host}, e.g. CUDAWATCH_AGENT_HOST from the downward API).
   */
  public static String hostname() {
    return hostname(KERNEL_HOSTNAME);
  }

  static String hostname(Path kernelHostname) {
    try {
      String h = Files.readString(kernelHostname, StandardCharsets.UTF_8).strip();
      if (!h.isEmpty() && h.length() <= 253) {
        return h;
      }
    } catch (IOException | RuntimeException e) {
      // not Linux, or no /proc: ask the resolver library, which asks the kernel too
    }
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (IOException e) {
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
