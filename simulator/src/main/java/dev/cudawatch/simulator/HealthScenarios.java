package dev.cudawatch.simulator;

import dev.cudawatch.common.wire.RecordKind;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Beside the failing fleet, what is slow or keeps coming back broken, on nodes of its own (so the
 * fleet's layout is untouched): three 8-rank jobs printing tqdm progress once a second at 0.5 s per
 * step, where rank 6 of {@code train-slowrank} (two nodes) turns 1.6x slower at {@link
 * #SLOW_RANK_AT}, every rank of {@code train-slowdown} 1.5x slower at {@link #SLOWDOWN_AT}, and
 * {@code train-steady} stays steady; and a node whose GPU 2 fails with a double-bit ECC Xid (and
 * the Xid 154 asking for a reset) three times, so the third failure comes after two resets, while
 * its GPU 5 fails twice (a reset, then a reboot) and never a third time. Deterministic from the
 * seed; a run shorter than a scenario's time leaves it out, truth included.
 */
public final class HealthScenarios {
  static final long SLOW_RANK_AT = 60_000;
  static final long SLOWDOWN_AT = 120_000;
  static final int SLOW_RANK = 6;
  static final double BASE_SECONDS = 0.5;
  static final String REPAIR_HOST = "repair-node-01";
  static final int LADDER_GPU = 2;
  static final int CONTROL_GPU = 5;
  static final long[] LADDER_FAILURES = {30_000, 110_000, 190_000};
  static final long[] CONTROL_FAILURES = {50_000, 150_000};

  private final SimSettings s;
  private final List<Expected> truth = new ArrayList<>();

  public HealthScenarios(SimSettings s) {
    this.s = s;
  }

  /** Every line, in time order (a few per rank per second: small enough to hold). */
  public List<SimLine> lines() {
    truth.clear();
    List<SimLine> out = new ArrayList<>();
    SplittableRandom r = new SplittableRandom(s.seed() * 7919 + 21);
    long start = s.startMillis();
    long end = start + s.seconds() * 1000;
    job(out, r, "train-slowrank", new String[] {"perf-node-01", "perf-node-02"}, start, end);
    job(out, r, "train-slowdown", new String[] {"perf-node-03"}, start, end);
    job(out, r, "train-steady", new String[] {"perf-node-04"}, start, end);
    repairs(out, start, end);
    out.sort(Comparator.comparingLong(SimLine::timeMillis));
    return out;
  }

  /** What should be found; complete once {@link #lines} returned. */
  public List<Expected> truth() {
    return truth;
  }

  private void job(
      List<SimLine> out, SplittableRandom r, String job, String[] hosts, long start, long end) {
    int perHost = 8 / hosts.length;
    for (int rank = 0; rank < 8; rank++) {
      String host = hosts[rank / perHost];
      int gpu = rank % perHost;
      int step = 0;
      for (long t = start + 1000 + rank * 7L; t < end; t += 1000) {
        double pace = BASE_SECONDS;
        if (job.equals("train-slowrank") && rank == SLOW_RANK && t >= start + SLOW_RANK_AT) {
          pace *= 1.6;
        }
        if (job.equals("train-slowdown") && t >= start + SLOWDOWN_AT) {
          pace *= 1.5;
        }
        pace *= 1 + (r.nextDouble() - 0.5) * 0.06; // tqdm's smoothed rate jitters a little
        step += (int) Math.round(1 / pace);
        out.add(
            new SimLine(
                t,
                host,
                job,
                rank,
                gpu,
                RecordKind.LOG,
                host + "/" + job + "/rank-" + rank + ".log",
                tqdm(step, pace, r)));
      }
    }
    if (job.equals("train-slowrank") && end > start + SLOW_RANK_AT) {
      String host = hosts[SLOW_RANK / perHost];
      truth.add(
          new Expected(
              start + SLOW_RANK_AT,
              "incident",
              "slow_rank",
              true,
              Map.of(
                  "host",
                  host,
                  "job",
                  job,
                  "rank",
                  "" + SLOW_RANK,
                  "gpu",
                  "" + SLOW_RANK % perHost),
              "health:slow_rank",
              false));
    }
    if (job.equals("train-slowdown") && end > start + SLOWDOWN_AT) {
      truth.add(
          new Expected(
              start + SLOWDOWN_AT,
              "incident",
              "job_slowdown",
              true,
              Map.of("job", job),
              "health:job_slowdown",
              false));
    }
  }

  /** Lightning's tqdm bar: "Epoch 0: 12%|█▏ | 120/1000 [01:00<07:20, 2.00it/s, loss=…]". */
  private static String tqdm(int step, double pace, SplittableRandom r) {
    int total = 100_000;
    int pct = (int) (100L * step / total);
    return String.format(
        Locale.ROOT,
        "Epoch 0: %3d%%|%-10s| %d/%d [%02d:%02d<%02d:%02d, %5.2fit/s, loss=%.3f, v_num=0]",
        pct,
        "#".repeat(pct / 10),
        step,
        total,
        (int) (step * pace) / 60 % 60,
        (int) (step * pace) % 60,
        r.nextInt(60),
        r.nextInt(60),
        1 / pace,
        0.5 + r.nextDouble() * 0.1);
  }

  private void repairs(List<SimLine> out, long start, long end) {
    for (int i = 0; i < LADDER_FAILURES.length; i++) {
      long t = start + LADDER_FAILURES[i];
      if (t >= end) {
        break;
      }
      failure(out, t, LADDER_GPU, 48, "GPU Reset Required");
      if (i == LADDER_FAILURES.length - 1) {
        truth.add(
            new Expected(
                t,
                "alert",
                "GpuRepairLadder",
                true,
                Map.of("host", REPAIR_HOST, "pci", pci(LADDER_GPU)),
                "health:repair_ladder",
                false));
      }
    }
    for (int i = 0; i < CONTROL_FAILURES.length; i++) {
      long t = start + CONTROL_FAILURES[i];
      if (t < end) {
        failure(
            out,
            t,
            CONTROL_GPU,
            i == 0 ? 48 : 79,
            i == 0 ? "GPU Reset Required" : "Node Reboot Required");
      }
    }
  }

  /** A failing GPU's kernel lines: the Xid, then the recovery the driver asks for (Xid 154). */
  private void failure(List<SimLine> out, long t, int gpu, int xid, String recovery) {
    String pci = pci(gpu).substring(5, 7);
    String what =
        xid == 79
            ? "GPU has fallen off the bus."
            : "An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer"
                + " at partition 6, subpartition 0.";
    kernel(
        out,
        t,
        "NVRM: Xid (PCI:0000:" + pci + ":00): " + xid + ", pid=5151, name=python3, " + what);
    kernel(
        out,
        t + 200,
        "NVRM: Xid (PCI:0000:"
            + pci
            + ":00): 154, GPU recovery action changed from 0x0 (None) to "
            + (recovery.startsWith("Node") ? "0x2" : "0x1")
            + " ("
            + recovery
            + ")");
    for (long at : new long[] {t, t + 200}) {
      truth.add(
          new Expected(
              at, "incident", "gpu_xid", true, Map.of("host", REPAIR_HOST), "health:xid", false));
    }
  }

  /** The PCI address the kernel log names, as the catalog extracts it. */
  static String pci(int gpu) {
    return String.format("0000:%02x:00", 0x18 + gpu * 0x10);
  }

  private static void kernel(List<SimLine> out, long t, String text) {
    out.add(
        new SimLine(
            t,
            REPAIR_HOST,
            null,
            null,
            null,
            RecordKind.KERNEL,
            REPAIR_HOST + "/kern.log",
            String.format(
                Locale.ROOT, "[%6d.%06d] %s", t / 1000 % 100_000, t % 1000 * 1000, text)));
  }
}
