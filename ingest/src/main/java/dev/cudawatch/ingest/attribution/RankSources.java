package dev.cudawatch.ingest.attribution;

import java.util.List;
import java.util.Map;

/**
 * Job, rank and local rank from the launchers' variables: torchrun ({@code RANK}, {@code
 * LOCAL_RANK}, {@code TORCHELASTIC_RUN_ID}), Slurm ({@code SLURM_PROCID}, {@code SLURM_LOCALID},
 * {@code SLURM_JOB_ID}), Open MPI ({@code OMPI_COMM_WORLD_RANK}, {@code
 * OMPI_COMM_WORLD_LOCAL_RANK}), MPICH/PMI ({@code PMI_RANK}) and Kubernetes pod names. The job is
 * first {@code CUDAWATCH_JOB}: the job a {@code cudawatch run} wrapper decided, which every process
 * under it inherits.
 */
public final class RankSources {
  /** A value and the variable it came from. */
  public record Found<T>(T value, String source) {}

  public static final List<String> RANK =
      List.of("RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK");
  public static final List<String> LOCAL_RANK =
      List.of("LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID");
  public static final List<String> JOB =
      List.of(
          "CUDAWATCH_JOB",
          "SLURM_JOB_ID",
          "TORCHELASTIC_RUN_ID",
          "KUBERNETES_POD_NAME",
          "POD_NAME");

  /** What {@code cudawatch run} sets in its child's environment: the job it decided. */
  public static final String RUN_JOB = "CUDAWATCH_JOB";

  private RankSources() {}

  public static Found<Integer> rank(Map<String, String> env) {
    return firstInt(env, RANK);
  }

  public static Found<Integer> localRank(Map<String, String> env) {
    return firstInt(env, LOCAL_RANK);
  }

  public static Found<String> job(Map<String, String> env) {
    for (String k : JOB) {
      String v = env.get(k);
      if (v != null && !v.isBlank()) {
        return new Found<>(v.strip(), k);
      }
    }
    return null;
  }

  private static Found<Integer> firstInt(Map<String, String> env, List<String> keys) {
    for (String k : keys) {
      String v = env.get(k);
      if (v == null) {
        continue;
      }
      try {
        int n = Integer.parseInt(v.strip());
        if (n >= 0) {
          return new Found<>(n, k);
        }
      } catch (NumberFormatException e) {
        // not a number: try the next launcher's variable
      }
    }
    return null;
  }
}
