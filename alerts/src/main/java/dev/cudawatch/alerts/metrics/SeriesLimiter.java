package dev.cudawatch.alerts.metrics;

import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Caps the label combinations of one metric. Past the cap, a new combination has its
 * high-cardinality labels replaced by {@code other}, and the cap is counted, so a flood of hosts or
 * jobs cannot blow up Prometheus.
 */
public final class SeriesLimiter {
  public static final String OTHER = "other";

  private final int max;
  private final boolean[] capped;
  private final Set<List<String>> seen = new HashSet<>();
  private final Consumer<Void> onCap;

  /**
   * @param max combinations allowed
   * @param cappable per label position: true when that label may be replaced by "other"
   * @param onCap called for each combination that was capped
   */
  public SeriesLimiter(int max, boolean[] cappable, Consumer<Void> onCap) {
    this.max = max;
    this.capped = cappable.clone();
    this.onCap = onCap;
  }

  public synchronized String[] admit(String... values) {
    List<String> key = Arrays.asList(values);
    if (seen.contains(key)) {
      return values;
    }
    if (seen.size() < max) {
      seen.add(List.of(values));
      return values;
    }
    String[] out = values.clone();
    for (int i = 0; i < out.length; i++) {
      if (capped[i]) {
        out[i] = OTHER;
      }
    }
    onCap.accept(null);
    seen.add(List.of(out)); // the "other" series itself always exists once admitted
    return out;
  }
}
