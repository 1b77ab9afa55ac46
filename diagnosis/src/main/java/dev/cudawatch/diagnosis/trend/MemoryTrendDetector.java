package dev.cudawatch.diagnosis.trend;

import dev.cudawatch.common.gpu.MemorySample;
import java.io.Serializable;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Optional;

/**
 * Detects steady GPU memory growth toward the card's capacity for one GPU, before the OOM. Uses the
 * Theil–Sen estimator (median of pairwise slopes), which ignores the spikes and drops of a training
 * step. State is bounded by {@link TrendSettings#windowSamples()}.
 */
public final class MemoryTrendDetector implements Serializable {
  private static final long serialVersionUID = 1L;

  /** Samples kept at full resolution for an OOM's context: two minutes at the sampler's 500 ms. */
  static final int RECENT_SAMPLES = 240;

  /**
   * Older samples, back to {@link OomHistory#LOOK_BACK_MS}, are thinned to one per this long unless
   * memory moved by {@link #THIN_SHARE} of the card: a flat history costs little, a jump stays.
   */
  static final long THIN_MS = 10_000;

  static final double THIN_SHARE = 0.01;

  /** Hard bound on the history, whatever memory does. */
  static final int HISTORY_SAMPLES = 600;

  /** A step of at least this share of the card is an allocation or a release, not growth. */
  static final double JUMP_SHARE = 0.05;

  private final TrendSettings settings;
  private final ArrayDeque<MemorySample> window = new ArrayDeque<>();
  private final java.util.ArrayList<MemorySample> history = new java.util.ArrayList<>();

  public MemoryTrendDetector(TrendSettings settings) {
    this.settings = settings;
  }

  /** Adds a sample; returns a trend when memory is heading to full soon. */
  public Optional<MemoryTrend> add(MemorySample s) {
    if (!window.isEmpty() && s.epochMillis() <= window.peekLast().epochMillis()) {
      return Optional.empty(); // late or duplicate sample: the window stays ordered
    }
    keep(s);
    if (window.size() < settings.minSamples()) {
      return Optional.empty();
    }
    MemorySample first = window.peekFirst();
    double span = (s.epochMillis() - first.epochMillis()) / 1000.0;
    if (span < settings.minSpanSeconds()) {
      return Optional.empty();
    }
    // The growth since the last big allocation or release: a long flat history and the step of a
    // model load must not water down the ramp that follows them.
    MemorySample[] xs = sinceLastJump(window.toArray(new MemorySample[0]));
    if (xs.length < settings.minSamples()) {
      return Optional.empty();
    }
    int rising = 0;
    for (int i = 1; i < xs.length; i++) {
      if (xs[i].usedBytes() >= xs[i - 1].usedBytes()) {
        rising++;
      }
    }
    if (rising < settings.minRisingFraction() * (xs.length - 1)) {
      return Optional.empty();
    }
    double slope = theilSen(xs);
    if (slope < settings.minGrowthBytesPerSecond()) {
      return Optional.empty();
    }
    long remaining = s.totalBytes() - s.usedBytes();
    if (remaining <= 0) {
      return Optional.empty(); // already full: the OOM itself is the incident now
    }
    double toFull = remaining / slope;
    if (toFull > settings.warnBelowSeconds()) {
      return Optional.empty();
    }
    return Optional.of(new MemoryTrend(slope, toFull, s));
  }

  /**
   * A detector that has seen {@code samples} (oldest first, as {@link #samples()} gave them): how a
   * stream job keeps it in state as plain samples, under its current settings.
   */
  public static MemoryTrendDetector resume(
      TrendSettings settings, java.util.List<MemorySample> samples) {
    MemoryTrendDetector d = new MemoryTrendDetector(settings);
    for (MemorySample s : samples) {
      d.keep(s);
    }
    return d;
  }

  private void keep(MemorySample s) {
    window.addLast(s);
    while (window.size() > settings.windowSamples()) {
      window.removeFirst();
    }
    history.add(s);
    // the sample leaving the recent part is kept only if time or memory moved since the last kept
    int leaving = history.size() - 1 - RECENT_SAMPLES;
    if (leaving >= 1) {
      MemorySample kept = history.get(leaving - 1);
      MemorySample x = history.get(leaving);
      if (x.epochMillis() - kept.epochMillis() < THIN_MS
          && Math.abs(x.usedBytes() - kept.usedBytes()) < THIN_SHARE * x.totalBytes()) {
        history.remove(leaving);
      }
    }
    int old = 0;
    while (old < history.size()
        && (history.size() - old > HISTORY_SAMPLES
            || history.get(old).epochMillis() < s.epochMillis() - OomHistory.LOOK_BACK_MS)) {
      old++;
    }
    history.subList(0, old).clear();
  }

  public int size() {
    return window.size();
  }

  /**
   * The samples of the last {@link OomHistory#LOOK_BACK_MS} (older than two minutes thinned),
   * oldest first: more than the detection window, for an OOM's context.
   */
  public java.util.List<MemorySample> samples() {
    return java.util.List.copyOf(history);
  }

  /**
   * The samples after the last jump: a step of at least {@link #JUMP_SHARE} of the card that is
   * also four times the typical step (so a fast but even ramp is not cut into pieces).
   */
  static MemorySample[] sinceLastJump(MemorySample[] xs) {
    if (xs.length < 3) {
      return xs;
    }
    long[] steps = new long[xs.length - 1];
    for (int i = 1; i < xs.length; i++) {
      steps[i - 1] = Math.abs(xs[i].usedBytes() - xs[i - 1].usedBytes());
    }
    long[] sorted = steps.clone();
    Arrays.sort(sorted);
    long typical = sorted[sorted.length / 2];
    long total = xs[xs.length - 1].totalBytes();
    for (int i = steps.length - 1; i >= 0; i--) {
      if (steps[i] >= JUMP_SHARE * total && steps[i] > 4 * typical) {
        return Arrays.copyOfRange(xs, i + 1, xs.length);
      }
    }
    return xs;
  }

  static double theilSen(MemorySample[] xs) {
    int n = xs.length;
    double[] slopes = new double[n * (n - 1) / 2];
    int k = 0;
    for (int i = 0; i < n; i++) {
      for (int j = i + 1; j < n; j++) {
        double dt = (xs[j].epochMillis() - xs[i].epochMillis()) / 1000.0;
        if (dt > 0) {
          slopes[k++] = (xs[j].usedBytes() - xs[i].usedBytes()) / dt;
        }
      }
    }
    if (k == 0) {
      return 0;
    }
    double[] s = Arrays.copyOf(slopes, k);
    Arrays.sort(s);
    return k % 2 == 1 ? s[k / 2] : (s[k / 2 - 1] + s[k / 2]) / 2;
  }
}
