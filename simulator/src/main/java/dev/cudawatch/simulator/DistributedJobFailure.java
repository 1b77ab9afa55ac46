package dev.cudawatch.simulator;

import dev.cudawatch.common.wire.RecordKind;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.Consumer;

/**
 * One distributed job that dies the way they do: every rank trains, one rank hits a root failure
 * and exits, the others block in their next collective until NCCL's watchdog times them out ten
 * minutes later ({@code Timeout(ms)=600000}), then the job restarts under a new id and trains on.
 * Each rank runs under {@code cudawatch run}, so its lines carry what the agent learns from the
 * rank's environment ({@link RunIdentity}). The truth names the failing rank's incident, the other
 * ranks' timeouts, and the one job failure they make.
 */
public final class DistributedJobFailure {
  /** NCCL's default collective timeout, which the watchdog lines print. */
  static final long NCCL_TIMEOUT_MS = 600_000;

  private final JobPlacement job;
  private final int failingRank;
  private final String cls;
  private final long start;
  private final long trainAfterMs;
  private final SplittableRandom r;
  private final List<SimLine> lines = new ArrayList<>();
  private final List<Expected> truth = new ArrayList<>();

  /**
   * @param job where the ranks run and how they were launched
   * @param failingRank the rank that fails first
   * @param cls its failure's class ({@link FailureLibrary}'s rank failures)
   * @param startMillis when the job starts (simulated time)
   * @param trainAfterMs how long the restarted job trains after the timeouts
   * @param seed everything random derives from it
   */
  public DistributedJobFailure(
      JobPlacement job,
      int failingRank,
      String cls,
      long startMillis,
      long trainAfterMs,
      long seed) {
    if (failingRank < 0 || failingRank >= job.worldSize()) {
      throw new IllegalArgumentException("rank " + failingRank + " is not in the job");
    }
    if (!FailureLibrary.RANK_FAILURES.containsKey(cls)) {
      throw new IllegalArgumentException("no rank failure of class " + cls);
    }
    this.job = job;
    this.failingRank = failingRank;
    this.cls = cls;
    this.start = startMillis;
    this.trainAfterMs = trainAfterMs;
    this.r = new SplittableRandom(seed);
  }

  /** Writes the job's lines, and its restart's, to {@code out} in time order. */
  public void run(Consumer<SimLine> out) {
    lines.clear();
    truth.clear();
    long failAt = start + 30_000;
    train(job, start, failAt);
    JobPlacement.Slot f = job.slot(failingRank);
    long at = failAt;
    for (String l : FailureLibrary.lines(cls, failingRank, job.ordinal(failingRank), pci(f), r)) {
      line(job, failingRank, at++, l);
    }
    truth.add(new Expected(failAt, "incident", cls, true, where(f), "distributed", false));
    long timeoutAt = failAt + NCCL_TIMEOUT_MS;
    for (JobPlacement.Slot s : job.slots()) {
      if (s.rank() == failingRank) {
        continue;
      }
      long t = timeoutAt + s.rank();
      for (String l :
          FailureLibrary.lines("nccl_timeout", s.rank(), job.ordinal(s.rank()), pci(s), r)) {
        line(job, s.rank(), t++, l);
      }
      // each rank's own stream sees a collective time out: a root in that stream
      truth.add(new Expected(t, "incident", "nccl_timeout", true, where(s), "distributed", false));
    }
    truth.add(
        new Expected(
            failAt,
            "job_failure",
            cls,
            true,
            Map.of(
                "job",
                job.job(),
                "host",
                f.host(),
                "rank",
                "" + failingRank,
                "gpu",
                "" + f.gpu(),
                "consequences",
                "" + (job.worldSize() - 1)),
            "distributed",
            false));
    for (String host : job.hosts()) {
      lines.add(
          new SimLine(
              timeoutAt + 5_000,
              host,
              job.job(),
              null,
              null,
              RecordKind.EXIT,
              host + "/" + job.job() + "/exit",
              "exit_code=1"));
    }
    JobPlacement again =
        new JobPlacement(job.job() + "-r1", job.launch(), job.hosts(), job.gpusPerHost());
    long restart = timeoutAt + 10_000;
    train(again, restart, restart + trainAfterMs);
    lines.sort(Comparator.comparingLong(SimLine::timeMillis));
    lines.forEach(out);
  }

  /** What should be detected, once {@link #run} returned. */
  public List<Expected> truth() {
    return List.copyOf(truth);
  }

  /** Every rank of p writes its banner at {@code from}, then a line a second until {@code to}. */
  private void train(JobPlacement p, long from, long to) {
    for (JobPlacement.Slot s : p.slots()) {
      HealthyOutput h = new HealthyOutput(r.nextLong(), s.host(), s.rank());
      long t = from;
      for (String l : h.banner(p.job(), p.worldSize())) {
        line(p, s.rank(), t++, l);
      }
      for (t = from + 1_000 + s.rank(); t < to; t += 1_000) {
        line(p, s.rank(), t, h.next());
      }
    }
  }

  private void line(JobPlacement p, int rank, long t, String text) {
    JobPlacement.Slot s = p.slot(rank);
    lines.add(
        new SimLine(
            t,
            s.host(),
            p.job(),
            rank,
            s.gpu(),
            RecordKind.LOG,
            s.host() + "/" + p.job() + "/rank-" + rank + ".log",
            p.print(rank, text),
            RunIdentity.of(p, rank, 30_000 + rank)));
  }

  private Map<String, String> where(JobPlacement.Slot s) {
    return Map.of(
        "host",
        s.host(),
        "job",
        job.job(),
        "rank",
        "" + s.rank(),
        "gpu",
        "" + s.gpu(),
        "launch",
        job.launch().name().toLowerCase(Locale.ROOT));
  }

  private static String pci(JobPlacement.Slot s) {
    return FleetSimulator.pci(s.gpu());
  }
}
