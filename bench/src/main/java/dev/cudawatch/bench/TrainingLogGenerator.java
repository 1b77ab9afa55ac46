package dev.cudawatch.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * A seeded, realistic training log: progress bars, loss lines, NCCL INFO, warnings and torchrun
 * banners, with one failure block (a traceback and its hints) per {@code failureEvery} lines.
 */
public final class TrainingLogGenerator {
  private static final String[] FAILURES = {
    "Traceback (most recent call last):\n  File \"/home/u/train.py\", line 88, in <module>\n    loss.backward()\n"
        + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.05 GiB is free. "
        + "Including non-PyTorch memory, this process has 78.09 GiB memory in use. Of the allocated memory 61.20 GiB is allocated by PyTorch, and 16.31 GiB is reserved by PyTorch but unallocated.",
    "RuntimeError: CUDA error: an illegal memory access was encountered\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1",
    "[rank3]:[E1122 03:08:10.697121634 ProcessGroupNCCL.cpp:689] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=16, OpType=ALLREDUCE, NumelIn=4196352, NumelOut=4196352, Timeout(ms)=600000) ran for 600077 milliseconds before timing out.",
    "/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu:111: operator(): block: [0,0,0], thread: [1,0,0] Assertion `-sizes[i] <= index && index < sizes[i] && \"index out of bounds\"` failed.",
    "NVRM: Xid (PCI:0000:3b:00): 79, pid=0, GPU has fallen off the bus.",
  };

  private TrainingLogGenerator() {}

  /** {@code n} lines; about one in {@code failureEvery} starts a failure block. */
  public static List<String> lines(int n, int failureEvery, long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    List<String> out = new ArrayList<>(n);
    int step = 0;
    while (out.size() < n) {
      int k = r.nextInt(100);
      if (r.nextInt(failureEvery) == 0) {
        for (String l : FAILURES[r.nextInt(FAILURES.length)].split("\n")) {
          out.add(l);
        }
        continue;
      }
      step++;
      if (k < 45) {
        out.add(
            String.format(
                Locale.ROOT,
                "step=%d loss=%.4f lr=%.2e grad_norm=%.3f tokens/s=%d cuda_mem_allocated_mb=%.1f",
                step,
                2.5 / Math.log(step + 2),
                3e-4,
                r.nextDouble(),
                100_000 + r.nextInt(50_000),
                40_000 + r.nextDouble() * 1000));
      } else if (k < 75) {
        out.add(
            String.format(
                Locale.ROOT,
                "epoch 3:  %d%%|%s| %d/5000 [02:%02d<04:%02d,  %.2fit/s, loss=%.3f]",
                step % 100,
                "#".repeat(step % 10) + " ".repeat(10 - step % 10),
                step % 5000,
                r.nextInt(60),
                r.nextInt(60),
                2 + r.nextDouble(),
                r.nextDouble()));
      } else if (k < 88) {
        out.add(
            String.format(
                Locale.ROOT,
                "gpu-node-%d:%d:%d [%d] NCCL INFO Channel %02d/24 :    0   1   2   3   4   5   6   7",
                r.nextInt(64),
                1000 + r.nextInt(9000),
                1000 + r.nextInt(9000),
                r.nextInt(8),
                r.nextInt(24)));
      } else if (k < 94) {
        out.add(
            "[rank"
                + r.nextInt(8)
                + "]:[W1122 03:03:17.766790437 ProcessGroupNCCL.cpp:1575] Warning: TORCH_NCCL_AVOID_RECORD_STREAMS is the default now, this environment variable is thus deprecated.");
      } else if (k < 97) {
        out.add(
            "/usr/lib/python3/dist-packages/torch/utils/checkpoint.py:91: UserWarning: None of the inputs have requires_grad=True. Gradients will be None");
      } else {
        out.add(
            String.format(
                Locale.ROOT,
                "I1122 03:0%d:%02d.%06d 631 torch/distributed/run.py:851] Saving checkpoint to /ckpt/step_%d.pt (%.1f GB)",
                r.nextInt(10),
                r.nextInt(60),
                r.nextInt(1_000_000),
                step,
                10 + r.nextDouble()));
      }
    }
    return out.subList(0, n);
  }
}
