package dev.cudawatch.diagnosis.trend;

/**
 * When a memory trend counts as a leak heading to OOM.
 *
 * @param windowSamples samples in the sliding window (bounded state per GPU)
 * @param minSamples samples needed before judging
 * @param minSpanSeconds the window must cover at least this long, so a model loading is no leak
 * @param minGrowthBytesPerSecond slower growth is ignored
 * @param minRisingFraction share of consecutive samples that must not fall (steadiness)
 * @param warnBelowSeconds warn when the predicted time to full drops under this
 */
public record TrendSettings(
    int windowSamples,
    int minSamples,
    double minSpanSeconds,
    double minGrowthBytesPerSecond,
    double minRisingFraction,
    double warnBelowSeconds)
    implements java.io.Serializable {

  public static TrendSettings defaults() {
    return new TrendSettings(60, 20, 15, 1 << 20, 0.8, 600);
  }
}
