package dev.cudawatch.simulator;

import java.util.Locale;
import java.util.SplittableRandom;

/**
 * What a healthy rank writes: tqdm progress bars redrawn with carriage returns, loss lines, NCCL
 * INFO while communicators form, deprecation warnings, checkpoint saves. Deterministic per seed.
 */
final class HealthyOutput {
  private final SplittableRandom r;
  private final int rank;
  private final String host;
  private int step;

  HealthyOutput(long seed, String host, int rank) {
    this.r = new SplittableRandom(seed);
    this.rank = rank;
    this.host = host;
  }

  /** The lines a (re)starting rank writes: torchrun's banner and NCCL's setup. */
  String[] banner(String job, int worldSize) {
    return new String[] {
      "I1122 03:00:00.000000 140 torch/distributed/run.py:792] Using nproc_per_node=8.",
      "[default"
          + rank
          + "]:W1122 03:00:01.000000 140 torch/distributed/run.py:803] Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded",
      String.format(
          Locale.ROOT,
          "%s:%d:%d [%d] NCCL INFO Bootstrap : Using eth0:10.0.%d.%d<0>",
          host,
          1000 + rank,
          1000 + rank,
          rank % 8,
          r.nextInt(255),
          r.nextInt(255)),
      String.format(
          Locale.ROOT,
          "%s:%d:%d [%d] NCCL INFO comm 0x%x rank %d nranks %d cudaDev %d busId %x0 - Init COMPLETE",
          host,
          1000 + rank,
          1000 + rank,
          rank % 8,
          r.nextInt(1 << 30),
          rank,
          worldSize,
          rank % 8,
          10 + rank % 8),
      "job " + job + " rank " + rank + " starting training"
    };
  }

  /** The next line of steady training output. */
  String next() {
    step++;
    int k = r.nextInt(100);
    if (k < 40) {
      return String.format(
          Locale.ROOT,
          "[rank%d] step=%d loss=%.4f lr=%.2e grad_norm=%.3f tokens/s=%d",
          rank,
          step,
          2.5 / Math.log(step + 2),
          3e-4,
          r.nextDouble() * 2,
          90_000 + r.nextInt(60_000));
    }
    if (k < 80) {
      // one tqdm line: three redraws separated by carriage returns
      StringBuilder b = new StringBuilder();
      for (int i = 0; i < 3; i++) {
        int pct = (step * 3 + i) % 100;
        if (i > 0) {
          b.append('\r');
        }
        b.append(
            String.format(
                Locale.ROOT,
                "Epoch 2: %3d%%|%-20s| %d/5000 [01:%02d<03:%02d, %.2fit/s, loss=%.3f]",
                pct,
                "#".repeat(pct / 5),
                (step * 3 + i) % 5000,
                r.nextInt(60),
                r.nextInt(60),
                3 + r.nextDouble(),
                r.nextDouble()));
      }
      return b.toString();
    }
    if (k < 90) {
      return String.format(
          Locale.ROOT,
          "%s:%d:%d [%d] NCCL INFO Channel %02d/32 : %d[%d] -> %d[%d] via P2P/CUMEM/read",
          host,
          1000 + rank,
          2000 + rank,
          rank % 8,
          r.nextInt(32),
          rank,
          rank % 8,
          (rank + 1) % 8,
          (rank + 1) % 8);
    }
    if (k < 96) {
      return "[rank"
          + rank
          + "]:[W1122 03:03:17.766790437 ProcessGroupNCCL.cpp:1575] Warning: TORCH_NCCL_AVOID_RECORD_STREAMS is the default now, this environment variable is thus deprecated.";
    }
    if (k < 99) {
      return "/usr/local/lib/python3.11/dist-packages/torch/utils/checkpoint.py:91: UserWarning: None of the inputs have requires_grad=True. Gradients will be None";
    }
    return String.format(
        Locale.ROOT,
        "[rank%d] saving checkpoint to /ckpt/step_%d.pt (%.1f GB)",
        rank,
        step,
        10 + r.nextDouble());
  }
}
