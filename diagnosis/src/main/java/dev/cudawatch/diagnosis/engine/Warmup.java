package dev.cudawatch.diagnosis.engine;

import dev.cudawatch.diagnosis.advice.Advisor;
import dev.cudawatch.diagnosis.catalog.Catalog;
import java.time.Instant;
import java.util.List;

/**
 * Classifies a synthetic log in memory, results thrown away, so a long-running process loads and
 * JIT-compiles the classifier's paths (prefilter, matching, grouping, rendering) at start-up and
 * not on the first real failure. Nothing it classifies leaves this class: no incident, no alert.
 */
public final class Warmup {
  private static final List<String> FAILURE =
      List.of(
          "Traceback (most recent call last):",
          "  File \"/warmup/train.py\", line 1, in <module>",
          "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a"
              + " total capacity of 79.10 GiB of which 1.00 GiB is free.",
          "[rank1]: RuntimeError: CUDA error: an illegal memory access was encountered",
          "NCCL WARN Cuda failure 'an illegal memory access was encountered'",
          "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.");

  private Warmup() {}

  /**
   * A failing job's last lines (a traceback, CUDA and NCCL errors, an Xid): each is an incident.
   */
  public static List<String> failureLines() {
    return FAILURE;
  }

  /**
   * Runs {@code rounds} synthetic streams through a classifier of {@code catalog}.
   *
   * @return incidents found (and discarded), so the work is not optimised away
   */
  public static int run(Catalog catalog, int rounds) {
    Advisor advisor = new Advisor(catalog.taxonomy());
    Instant now = Instant.EPOCH;
    int found = 0;
    for (int r = 0; r < rounds; r++) {
      StreamClassifier sc =
          new StreamClassifier(
              catalog,
              advisor,
              new StreamContext("warmup", null, "warmup-" + r),
              ClassifierSettings.defaults(),
              new StreamState());
      for (int i = 0; i < 200; i++) {
        found +=
            sc.accept("step " + i + " loss 0." + i + " lr 3e-4 tokens/s 1234", null, now).size();
        if (i % 50 == 25) {
          for (String l : FAILURE) {
            found += sc.accept(l, null, now).size();
          }
        }
      }
      found += sc.flush(now).size();
    }
    return found;
  }
}
