package dev.cudawatch.diagnosis.jobs;

import java.util.List;

/**
 * The answer to "which rank, on which GPU, and why" for one failed job.
 *
 * @param cause how the culprit was found
 * @param root the incident that names the culprit (the root cause of the job)
 * @param ranks the culprit rank(s), possibly empty when no incident names a rank
 * @param gpu the culprit's GPU, or null
 * @param gpuInferred true when the GPU follows from the local rank alone (torch's {@code
 *     set_device(local_rank)} convention), not from a line that names it
 * @param evidence the facts the decision rests on, one sentence each
 */
public record Culprit(
    Cause cause,
    RankEvidence root,
    List<Long> ranks,
    String gpu,
    boolean gpuInferred,
    List<String> evidence) {

  /** How the culprit was found, strongest first. */
  public enum Cause {
    /** Ranks timed out in a collective that these ranks never issued: hung outside NCCL. */
    HUNG_OUTSIDE_COLLECTIVE(
        "hung outside the collective (host code, data loading, I/O or a deadlock)",
        "See where the hung rank's Python threads are: py-spy dump --pid PID (while it hangs), or"
            + " faulthandler.dump_traceback_later in the job.",
        "Look at what that rank does before this collective that the others do not: rank-dependent"
            + " branches, data loading, checkpoint or file I/O, a lock.",
        "Keep the flight recorder on (TORCH_NCCL_TRACE_BUFFER_SIZE=2000,"
            + " TORCH_NCCL_DUMP_ON_TIMEOUT=1) to record each rank's collectives the next time."),
    /** NCCL named the remote end of a failed connection: the network between two hosts. */
    NAMED_PEER(
        "lost its NCCL connection to the peer it names: the network between the two hosts",
        "Test the link between this rank's host and the peer: ibstat / ibv_devinfo (port state,"
            + " errors), then nccl-tests all_reduce_perf across the two hosts.",
        "Check the fabric settings NCCL uses (NCCL_IB_HCA, NCCL_SOCKET_IFNAME, NCCL_IB_GID_INDEX)"
            + " and the switch ports' error counters; a peer host that rebooted or lost its NIC"
            + " looks the same.",
        "NVIDIA's NCCL troubleshooting guide, networking issues."),
    /** The earliest failure of the job's own (an OOM, an exception, a device assert...). */
    EARLIER_ERROR(
        "its own error; the other ranks' timeouts and aborts followed from it",
        "Fix this rank's error first: the other ranks' NCCL timeouts and aborts are its"
            + " consequences."),
    /** A worker killed by SIGKILL with no error of its own: the OOM killer, a scheduler. */
    KILLED(
        "killed by SIGKILL from outside (the OOM killer, a scheduler or a person)",
        "Look for the OOM killer in the node's kernel log (journalctl -k | grep -i 'killed"
            + " process') and compare the job's host-memory limit with its peak RSS.",
        "Ask the scheduler why it ended the process (preemption, a time or memory limit)."),
    /** Ranks timed out and one rank of the job never reported the timeout: likely hung. */
    SILENT_RANK(
        "never reported the collective the others timed out in: likely hung",
        "See where that rank's threads are while it hangs (py-spy dump --pid PID).",
        "Enable the flight recorder (TORCH_NCCL_TRACE_BUFFER_SIZE) to record each rank's"
            + " collectives."),
    /** Nothing better: the job's earliest incident. */
    FIRST_FAILURE(
        "the job's first failure",
        "Read every rank's output around this time for an earlier error.");

    private final String words;
    private final List<String> nextSteps;

    Cause(String words, String... nextSteps) {
      this.words = words;
      this.nextSteps = List.of(nextSteps);
    }

    /** What to do, most useful first. */
    public List<String> nextSteps() {
      return nextSteps;
    }

    /** The cause a record names ({@link #id}), or empty for an unknown or missing name. */
    public static java.util.Optional<Cause> of(String id) {
      for (Cause c : values()) {
        if (c.id().equals(id)) {
          return java.util.Optional.of(c);
        }
      }
      return java.util.Optional.empty();
    }

    /** The wire and label name: {@code hung_outside_collective}. */
    public String id() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }

    public String words() {
      return words;
    }
  }

  public Culprit {
    ranks = List.copyOf(ranks);
    evidence = List.copyOf(evidence);
  }

  /** One sentence: the culprit, where, and why. */
  public String headline() {
    String who =
        ranks.isEmpty()
            ? "the job"
            : (ranks.size() == 1 ? "rank " : "ranks ")
                + String.join(", ", ranks.stream().map(String::valueOf).toList());
    String where = root.host() == null ? "" : " on " + root.host();
    String on =
        gpu == null ? "" : " GPU " + gpu + (gpuInferred ? " (inferred from its local rank)" : "");
    return who + where + on + ": " + cause.words();
  }
}
