package dev.cudawatch.processor.health;

import java.util.Arrays;

/** The median: robust to the odd slow step (a checkpoint, an evaluation) that a mean is not. */
final class Medians {
  private Medians() {}

  /** The median of the first {@code n} values, or NaN when there are none. */
  static double of(double[] values, int n) {
    if (n <= 0) {
      return Double.NaN;
    }
    double[] c = Arrays.copyOf(values, n);
    Arrays.sort(c);
    return n % 2 == 1 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
  }
}
