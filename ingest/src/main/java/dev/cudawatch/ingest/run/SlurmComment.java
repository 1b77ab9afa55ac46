package dev.cudawatch.ingest.run;

import dev.cudawatch.ingest.proc.ExternalCommand;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Puts a failed task's verdict in its Slurm job's Comment, where users look ({@code scontrol show
 * job}, {@code sacct -o Comment}). It must happen while the job still runs: slurmctld refuses
 * updates of a finished job, so an Epilog cannot. The job's owner may set its Comment (AdminComment
 * needs an operator). One Comment per job: the first failing task writes it, a task that finds one
 * already there (cudawatch's or the user's own) leaves it. Bounded by the caller's deadline; every
 * failure is silent (the job's result is its own).
 */
public final class SlurmComment {
  /** What a task reports: whether the Comment now holds its verdict, and if not why. */
  public enum Outcome {
    SET,
    NOT_SLURM,
    TAKEN,
    FAILED
  }

  private static final Pattern COMMENT =
      Pattern.compile("(?:^|\\s)Comment=(.*?)(?=\\s+[A-Za-z][A-Za-z/]*=|\\s*$)");

  private SlurmComment() {}

  /**
   * @param env the job's environment: {@code SLURM_JOB_ID}, and {@code CUDAWATCH_SCONTROL} for a
   *     scontrol that is not on the PATH
   */
  public static Outcome set(Map<String, String> env, String verdict, long deadlineNanos) {
    String job = env.get("SLURM_JOB_ID");
    if (job == null || !job.matches("[0-9_]+")) {
      return Outcome.NOT_SLURM;
    }
    String scontrol = env.getOrDefault("CUDAWATCH_SCONTROL", "scontrol");
    ExternalCommand.Result shown =
        ExternalCommand.run(List.of(scontrol, "-o", "show", "job", job), left(deadlineNanos));
    if (!shown.ok()) {
      return Outcome.FAILED;
    }
    String current = comment(shown.output());
    if (current != null && !current.isEmpty() && !current.equals("(null)")) {
      return Outcome.TAKEN;
    }
    ExternalCommand.Result r =
        ExternalCommand.run(
            List.of(scontrol, "update", "JobId=" + job, "Comment=" + verdict), left(deadlineNanos));
    return r.ok() ? Outcome.SET : Outcome.FAILED;
  }

  /** The Comment in a {@code scontrol -o show job} line, or null when it has none. */
  static String comment(String showJob) {
    Matcher m = COMMENT.matcher(showJob.strip());
    return m.find() ? m.group(1) : null;
  }

  private static Duration left(long deadlineNanos) {
    return Duration.ofNanos(Math.max(1_000_000, deadlineNanos - System.nanoTime()));
  }
}
