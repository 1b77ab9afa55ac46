package dev.cudawatch.simulator;

import dev.cudawatch.common.gpu.MemorySample;
import dev.cudawatch.common.gpu.NvidiaSmiCsv;
import dev.cudawatch.common.wire.RecordKind;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import java.util.function.Consumer;

/**
 * A fleet of GPU nodes running training jobs, with failures injected on a schedule: every class of
 * the taxonomy, a consequence after its root, a burst of device asserts, a lemon GPU failing
 * different jobs beside kernel Xids, one line of code failing on two hosts, a memory leak running
 * into an OOM, a crash loop on one GPU, and an NCCL hang. Lines come out in time order; the ground
 * truth says what should be detected. Everything derives from the seed.
 *
 * <p>Each node runs one job of a rank per GPU, launched as fleets launch them ({@link
 * JobPlacement}); every rank runs under {@code cudawatch run}, so its lines carry the job, rank and
 * GPU the agent derives from its environment ({@link RunIdentity}), while its text mostly names
 * neither. The truth names the host, job, rank and GPU each failure belongs to.
 */
public final class FleetSimulator {
  static final long MIB = 1 << 20;
  static final long TOTAL = 81_559 * MIB; // an 80 GB card as nvidia-smi reports it
  static final long RESTART_MS = 3_000;
  static final long LEAK_MS = 150_000;
  static final int LEMON_GPU = 0;

  private final SimSettings s;
  private final SplittableRandom r;
  private final List<Expected> truth = new ArrayList<>();
  private final PriorityQueue<SimLine> pending =
      new PriorityQueue<>(Comparator.comparingLong(SimLine::timeMillis));
  private final PriorityQueue<Action> actions =
      new PriorityQueue<>(Comparator.comparingLong(Action::at).thenComparingLong(Action::order));
  private final Host[] hosts;
  private long seq;
  private long order;

  /** Something a scenario does later: a second failure, the OOM at the end of a leak. */
  private record Action(long at, long order, Runnable run) {}

  private void later(long at, Runnable run) {
    actions.add(new Action(at, order++, run));
  }

  private static final class Host {
    final String name;
    final int number; // 1-based, as in the name
    final HealthyOutput[] ranks;
    int jobNo;
    JobPlacement placement; // the running job's ranks and launch
    RunIdentity[] who; // per GPU: what `cudawatch run` ships for the rank on it
    int nextGpu;
    String job;
    long downUntil; // the job is dead (restarting) until then
    boolean hung; // a hang: silent for the rest of the run
    final long[] leakStart; // per GPU: when a leak began, or -1
    final long[] leakEnd;

    Host(String name, int number, int gpus, long seed) {
      this.name = name;
      this.number = number;
      this.ranks = new HealthyOutput[gpus];
      for (int g = 0; g < gpus; g++) {
        ranks[g] = new HealthyOutput(seed * 31 + g, name, g);
      }
      leakStart = new long[gpus];
      leakEnd = new long[gpus];
      java.util.Arrays.fill(leakStart, -1);
    }
  }

  public FleetSimulator(SimSettings s) {
    this.s = s;
    this.r = new SplittableRandom(s.seed());
    this.hosts = new Host[s.hosts()];
    for (int h = 0; h < s.hosts(); h++) {
      hosts[h] =
          new Host(String.format("gpu-node-%02d", h + 1), h + 1, s.gpusPerHost(), s.seed() + h);
    }
  }

  /** The scenarios in the order they are injected; a short run injects the first ones only. */
  static List<String> scenarios() {
    List<String> out = new ArrayList<>();
    out.add("lemon");
    out.add("leak");
    out.add("codebug");
    out.add("cascade");
    out.add("burst");
    out.addAll(FailureLibrary.RANK_FAILURES.keySet());
    out.add("kernel:gpu_xid");
    out.add("kernel:host_oom");
    out.add("crashloop");
    out.add("hang");
    return out;
  }

  /** Writes the fleet's lines to {@code out} in time order. */
  public void run(Consumer<SimLine> out) {
    long start = s.startMillis();
    for (Host h : hosts) {
      startJob(h, start);
    }
    List<String> plan = scenarios();
    long end = start + s.seconds() * 1000;
    int next = 0;
    long tick = 100;
    double perRankPerTick =
        s.linesPerSecond() * tick / 1000.0 / (double) (s.hosts() * s.gpusPerHost());
    double carry = 0;
    for (long t = start; t < end; t += tick) {
      long at = start + (next + 1L) * s.failureEverySeconds() * 1000;
      if (next < plan.size() && t >= at) {
        inject(plan.get(next), next, t);
        next++;
      }
      while (!actions.isEmpty() && actions.peek().at() <= t) {
        actions.poll().run().run();
      }
      carry += perRankPerTick;
      int n = (int) carry;
      carry -= n;
      for (Host h : hosts) {
        if (t < h.downUntil || h.hung) {
          continue;
        }
        for (int g = 0; g < s.gpusPerHost(); g++) {
          for (int i = 0; i < n; i++) {
            emit(t + (tick * i) / Math.max(1, n), h, g, h.ranks[g].next());
          }
        }
      }
      if ((t - start) % 1000 == 0) {
        samples(t);
      }
      while (!pending.isEmpty() && pending.peek().timeMillis() < t + tick) {
        out.accept(pending.poll());
      }
    }
    while (!pending.isEmpty() && pending.peek().timeMillis() < end) {
      out.accept(pending.poll());
    }
  }

  /** What should have been detected, once {@link #run} returned. */
  public List<Expected> truth() {
    return truth;
  }

  private void startJob(Host h, long t) {
    h.jobNo++;
    JobPlacement.Launch launch = launch(h, h.jobNo);
    h.job =
        launch == JobPlacement.Launch.SRUN_GPU_PER_TASK
            ? String.valueOf(100_000 + h.number * 1_000 + h.jobNo) // a Slurm job id
            : h.name.replace("gpu-node-", "job-") + "-" + h.jobNo;
    h.placement = new JobPlacement(h.job, launch, List.of(h.name), s.gpusPerHost());
    h.who = new RunIdentity[s.gpusPerHost()];
    for (int g = 0; g < s.gpusPerHost(); g++) {
      h.who[g] = RunIdentity.of(h.placement, rankOf(h, g), 20_000 + h.jobNo * 100 + g);
    }
    for (int g = 0; g < s.gpusPerHost(); g++) {
      long at = t;
      for (String l : h.ranks[g].banner(h.job, s.gpusPerHost())) {
        emit(at++, h, g, l);
      }
    }
  }

  private void emit(long t, Host h, int g, String text) {
    int rank = rankOf(h, g);
    pending.add(
        new SimLine(
            t,
            h.name,
            h.job,
            rank,
            g,
            RecordKind.LOG,
            h.name + "/" + h.job + "/rank-" + rank + ".log",
            h.placement.print(rank, text),
            h.who[g]));
    seq++;
  }

  /**
   * How job {@code jobNo} of h is launched, from the seed alone (a job restarted under its id keeps
   * its launch): most under torchrun printing no GPU and no rank, some with {@code [rankN]:}
   * prefixes, some under srun with one GPU per task whose messages say GPU 0.
   */
  private JobPlacement.Launch launch(Host h, int jobNo) {
    int k = new SplittableRandom(s.seed() * 1_000_003L + h.number * 1_009L + jobNo).nextInt(10);
    return k < 6
        ? JobPlacement.Launch.TORCHRUN
        : k < 8 ? JobPlacement.Launch.TORCHRUN_PREFIXED : JobPlacement.Launch.SRUN_GPU_PER_TASK;
  }

  /** The global rank of h's job's process on GPU g. */
  private static int rankOf(Host h, int g) {
    return h.placement.rankOn(h.name, g);
  }

  /** The lines rank-on-g of h's job writes when it fails with {@code cls}, in its own numbering. */
  private List<String> failure(String cls, Host h, int g) {
    int rank = rankOf(h, g);
    return FailureLibrary.lines(cls, rank, h.placement.ordinal(rank), pci(g), r);
  }

  private void kernel(long t, Host h, String text) {
    pending.add(
        new SimLine(t, h.name, null, null, null, RecordKind.KERNEL, h.name + "/kern.log", text));
  }

  /** One nvidia-smi sample per GPU per second: steady use, or a leak's climb. */
  private void samples(long t) {
    for (Host h : hosts) {
      for (int g = 0; g < s.gpusPerHost(); g++) {
        long used;
        if (h.leakStart[g] >= 0 && t >= h.leakStart[g] && t <= h.leakEnd[g]) {
          double f = (t - h.leakStart[g]) / (double) (h.leakEnd[g] - h.leakStart[g]);
          used = (long) (TOTAL * (0.30 + 0.70 * f));
        } else {
          used = (long) (TOTAL * (0.55 + 0.02 * r.nextDouble()));
        }
        String row =
            NvidiaSmiCsv.toAgentRow(
                new MemorySample(t, g, "00000000:" + pci(g) + ":00.0", used / MIB * MIB, TOTAL));
        pending.add(
            new SimLine(
                t, h.name, null, null, g, RecordKind.GPU_MEMORY, h.name + "/nvidia-smi.csv", row));
      }
    }
  }

  static String pci(int gpu) {
    return String.format("%02X", 0x18 + gpu * 0x10);
  }

  /**
   * A GPU of h no earlier scenario used, so only the lemon scenario fails different jobs on one GPU
   * (past gpus-per-host scenarios on a node they repeat: a long run may make more lemons).
   */
  private int freshGpu(Host h) {
    int g = (h.nextGpu++ + (h == hosts[0] ? 1 : 0)) % s.gpusPerHost();
    return h == hosts[0] && g == LEMON_GPU ? (g + 1) % s.gpusPerHost() : g;
  }

  private void inject(String scenario, int k, long t) {
    Host h = hosts[k % hosts.length];
    int g = scenario.equals("lemon") ? LEMON_GPU : freshGpu(h);
    switch (scenario) {
      case "lemon" -> {
        // two different jobs fail on GPU g of the first node, beside a double-bit ECC Xid
        Host lemon = hosts[0];
        fail(lemon, g, "illegal_memory_access", t, "lemon");
        kernel(t + 500, lemon, xid(48, g));
        expect(t, "incident", "gpu_xid", true, Map.of("host", lemon.name), "lemon");
        later(
            t + RESTART_MS + 2_000,
            () -> fail(lemon, g, "illegal_memory_access", t + RESTART_MS + 2_000, "lemon"));
        expect(t, "alert", "LemonGpu", true, Map.of("host", lemon.name, "gpu", "" + g), "lemon");
      }
      case "leak" -> {
        h.leakStart[g] = t;
        h.leakEnd[g] = t + LEAK_MS;
        expect(t, "incident", "memory_leak", true, Map.of("host", h.name, "gpu", "" + g), "leak");
        expect(t, "alert", "GpuMemoryLeak", true, Map.of("host", h.name, "gpu", "" + g), "leak");
        // the OOM comes when the card is full
        later(t + LEAK_MS, () -> fail(h, g, "cuda_oom", t + LEAK_MS, "leak"));
      }
      case "codebug" -> {
        Host other = hosts[(k + 1) % hosts.length];
        failWith(h, g, "device_assert", t, "codebug", codeBugLines(h, g), false);
        if (hosts.length > 1) {
          int og = freshGpu(other);
          failWith(other, og, "device_assert", t, "codebug", codeBugLines(other, og), false);
        }
        if (hosts.length > 1) {
          expect(
              t,
              "alert",
              "CodeBug",
              true,
              Map.of("user_frame", "/workspace/train.py:42", "class", "device_assert"),
              "codebug");
        }
      }
      case "cascade" -> {
        List<String> lines = new ArrayList<>(failure("illegal_memory_access", h, g));
        lines.addAll(failure("cublas_error", h, g));
        expect(t, "incident", "cublas_error", false, where(h, g), "cascade"); // before the restart
        failWith(h, g, "illegal_memory_access", t, "cascade", lines, false);
      }
      case "burst" -> {
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
          lines.add(
              "/pytorch/aten/src/ATen/native/cuda/Loss.cu:250: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], thread: ["
                  + i
                  + ",0,0] Assertion `t >= 0 && t < n_classes` failed.");
        }
        lines.addAll(failure("device_assert", h, g).subList(1, 5));
        failWith(h, g, "device_assert", t, "burst", lines, false);
      }
      case "kernel:gpu_xid" -> {
        kernel(t, h, xid(79, g));
        expect(t, "incident", "gpu_xid", true, Map.of("host", h.name), scenario);
      }
      case "kernel:host_oom" -> {
        kernel(t, h, FailureLibrary.lines("host_oom", 0, 0, pci(0), r).get(0));
        expect(t, "incident", "host_oom", true, Map.of("host", h.name), scenario);
      }
      case "crashloop" -> {
        for (int i = 0; i < 3; i++) {
          long at = t + i * (RESTART_MS + 1_000);
          // a crash loop restarts under the same job id (torchelastic, Slurm requeue)
          later(
              at,
              () ->
                  failWith(
                      h,
                      g,
                      "illegal_memory_access",
                      at,
                      "crashloop",
                      failure("illegal_memory_access", h, g),
                      true));
        }
        expect(
            t,
            "alert",
            "RepeatedIllegalMemoryAccess",
            true,
            Map.of("host", h.name, "gpu", "" + g),
            "crashloop");
      }
      case "hang" -> {
        for (int rank = 0; rank < s.gpusPerHost(); rank++) {
          for (String l : failure("nccl_timeout", h, rank)) {
            emit(t + rank, h, rank, l);
          }
          expect(t, "incident", "nccl_timeout", true, where(h, rank), "hang");
        }
        expect(
            t,
            "alert",
            "JobSilentAfterError",
            true,
            Map.of("host", h.name, "job", h.job),
            "hang",
            true);
        h.hung = true;
      }
      default -> fail(h, g, scenario, t, "single:" + scenario);
    }
  }

  private List<String> codeBugLines(Host h, int g) {
    List<String> l = new ArrayList<>(failure("device_assert", h, g));
    for (int i = 0; i < l.size(); i++) {
      l.set(i, l.get(i).replaceAll("line \\d+, in <module>", "line 42, in <module>"));
    }
    return l;
  }

  private void fail(Host h, int g, String cls, long t, String scenario) {
    failWith(h, g, cls, t, scenario, failure(cls, h, g), false);
  }

  /** Rank g of h's job writes {@code lines} at t and the job dies; it restarts as a new job. */
  private void failWith(
      Host h, int g, String cls, long t, String scenario, List<String> lines, boolean sameJob) {
    long at = Math.max(t, h.downUntil);
    expect(at, "incident", cls, true, where(h, g), scenario);
    for (String l : lines) {
      emit(at++, h, g, l);
    }
    pending.add(exit(at + 100, h));
    h.downUntil = at + RESTART_MS;
    if (sameJob) {
      h.jobNo--; // startJob counts it up again: the same id
    }
    startJob(h, h.downUntil);
  }

  private SimLine exit(long t, Host h) {
    return new SimLine(
        t,
        h.name,
        h.job,
        null,
        null,
        RecordKind.EXIT,
        h.name + "/" + h.job + "/exit",
        "exit_code=1");
  }

  private static String xid(int xid, int gpu) {
    String text =
        xid == 79
            ? "GPU has fallen off the bus."
            : "An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0.";
    return "[ 4521.123456] NVRM: Xid (PCI:0000:"
        + pci(gpu).toLowerCase()
        + ":00): "
        + xid
        + ", pid=4242, name=python3, "
        + text;
  }

  /** Where rank-on-g of h's job failed: what its incident should be attributed to. */
  private static Map<String, String> where(Host h, int g) {
    return Map.of(
        "host",
        h.name,
        "job",
        h.job,
        "rank",
        "" + rankOf(h, g),
        "gpu",
        "" + g,
        "launch",
        h.placement.launch().name().toLowerCase(java.util.Locale.ROOT));
  }

  private void expect(
      long t, String type, String name, boolean root, Map<String, String> labels, String scenario) {
    expect(t, type, name, root, labels, scenario, false);
  }

  private void expect(
      long t,
      String type,
      String name,
      boolean root,
      Map<String, String> labels,
      String scenario,
      boolean realTime) {
    truth.add(new Expected(t, type, name, root, labels, scenario, realTime));
  }

  long linesEmitted() {
    return seq;
  }
}
