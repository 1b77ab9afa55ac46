package dev.cudawatch.common.text;

import java.util.Locale;

/**
 * Healthy training output in the shapes jobs print (step logs, logging records, progress bars,
 * NCCL's INFO lines), for warming the per-line paths at start-up: the agent's reading and the job's
 * classifier. None of it is a failure, so classifying it yields nothing.
 */
public final class TrainingOutput {
  private TrainingOutput() {}

  /** The {@code i}-th line: deterministic, so a warm-up does the same work every start. */
  public static String line(int i) {
    return switch (i % 4) {
      case 0 ->
          String.format(
              Locale.ROOT,
              "[rank%d]: step %d/100000 | loss %.4f | lr %.2e | grad_norm %.3f | %d tokens/s",
              i % 8,
              i,
              2.5 - i * 1e-5,
              3e-4,
              0.5 + (i % 97) / 100.0,
              180_000 + i % 5_000);
      case 1 ->
          String.format(
              Locale.ROOT,
              "2026-01-01 00:%02d:%02d,%03d INFO trainer.py:%d] epoch %d iter %d loss=%.5f",
              i / 60 % 60,
              i % 60,
              i % 1000,
              200 + i % 50,
              i / 10_000,
              i,
              2.1 - i * 1e-5);
      case 2 ->
          String.format(
              Locale.ROOT,
              "Epoch %d:  %d%%|█████     | %d/5000 [%02d:%02d<%02d:%02d, %.2fit/s, loss=%.3f]",
              i / 5000,
              i % 100,
              i % 5000,
              i / 60 % 60,
              i % 60,
              i / 30 % 60,
              i % 30,
              7.5 + i % 10 / 10.0,
              1.9 - i * 1e-5);
      default ->
          String.format(
              Locale.ROOT,
              "node-%d:%d:%d [%d] NCCL INFO Channel %02d/0 : %d[%d] -> %d[%d] via P2P/CUMEM",
              i % 4,
              1000 + i % 8,
              2000 + i % 8,
              i % 8,
              i % 32,
              i % 8,
              i % 8,
              (i + 1) % 8,
              (i + 1) % 8);
    };
  }
}
