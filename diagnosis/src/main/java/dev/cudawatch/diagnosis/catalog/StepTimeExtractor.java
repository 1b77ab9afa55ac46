package dev.cudawatch.diagnosis.catalog;

import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Reads how long a training step took from the progress lines jobs already print (tqdm, Hugging
 * Face Trainer and Lightning bars, Megatron, DeepSpeed, a site's own pattern): the {@code
 * step_times} section of the catalog, compiled like signatures (keywords, RE2/J match and extract
 * patterns) and kept apart from them so the classifier's keyword scan does not grow. Immutable;
 * {@link #secondsPerStep} allocates only on lines its keywords flag.
 */
public final class StepTimeExtractor {
  /** Named groups a step pattern may set, each converted to seconds per step. */
  public static final List<String> GROUPS =
      List.of("seconds_per_step", "ms_per_step", "steps_per_second", "samples_per_second");

  private final List<Signature> patterns;
  private final KeywordMatcher keywords;

  StepTimeExtractor(List<Signature> patterns, KeywordMatcher keywords) {
    this.patterns = List.copyOf(patterns);
    this.keywords = keywords;
  }

  /** The ids of the step patterns, in priority order (a site's first). */
  public List<String> ids() {
    return patterns.stream().map(Signature::id).toList();
  }

  /**
   * Seconds per step stated by {@code line}, or NaN. A redrawn progress bar ({@code \r}) counts by
   * its last drawing. Samples per second (DeepSpeed) stand for steps: rank against rank and a job
   * against its own past compare like with like.
   */
  public double secondsPerStep(String line) {
    int cr = line.lastIndexOf('\r', line.length() - 2);
    String text = cr >= 0 ? line.substring(cr + 1) : line;
    long[] mask = new long[keywords.maskWords()];
    if (!keywords.scan(text, mask)) {
      return Double.NaN;
    }
    for (int w = 0; w < mask.length; w++) {
      long bits = mask[w];
      while (bits != 0) {
        int i = (w << 6) + Long.numberOfTrailingZeros(bits);
        bits &= bits - 1;
        Map<String, String> f = patterns.get(i).match(text);
        if (f != null) {
          double s = seconds(f);
          if (s > 0 && Double.isFinite(s)) {
            return s;
          }
        }
      }
    }
    return Double.NaN;
  }

  private static double seconds(Map<String, String> f) {
    try {
      if (f.containsKey("seconds_per_step")) {
        return Double.parseDouble(f.get("seconds_per_step"));
      }
      if (f.containsKey("ms_per_step")) {
        return Double.parseDouble(f.get("ms_per_step")) / 1000.0;
      }
      if (f.containsKey("steps_per_second")) {
        return 1.0 / Double.parseDouble(f.get("steps_per_second"));
      }
      if (f.containsKey("samples_per_second")) {
        return 1.0 / Double.parseDouble(f.get("samples_per_second"));
      }
    } catch (NumberFormatException e) {
      return Double.NaN; // e.g. tqdm's "?it/s" before the first step
    }
    return Double.NaN;
  }

  @Override
  public String toString() {
    return "StepTimeExtractor" + Arrays.toString(ids().toArray());
  }
}
