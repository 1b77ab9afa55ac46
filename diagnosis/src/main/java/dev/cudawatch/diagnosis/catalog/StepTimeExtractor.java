package dev.cudawatch.diagnosis.catalog;

import com.google.re2j.Matcher;
import com.google.re2j.Pattern;
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
  private final Step[] steps;
  private final KeywordMatcher keywords;

  StepTimeExtractor(List<Signature> patterns, KeywordMatcher keywords) {
    this.patterns = List.copyOf(patterns);
    this.steps = this.patterns.stream().map(Step::new).toArray(Step[]::new);
    this.keywords = keywords;
  }

  /** The compiled patterns, in priority order: for the test that checks the reading. */
  List<Signature> signatures() {
    return patterns;
  }

  KeywordMatcher keywords() {
    return keywords;
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
        double s = steps[i].seconds(text);
        if (s > 0 && Double.isFinite(s)) {
          return s;
        }
      }
    }
    return Double.NaN;
  }

  /**
   * One step pattern, read the way {@link Signature#match} reads it but without its field map: the
   * first match pattern that finds, unless an exclude pattern finds, and of its groups the first of
   * {@link #GROUPS} it sets. The exclude patterns run before the groups are read, since reading a
   * group is RE2/J's second pass over the match. A pattern with extract patterns (whose fields
   * could supply a group the match leaves unset) goes through {@link Signature#match}.
   */
  private static final class Step {
    private final Signature signature;
    private final Pattern[] match;
    private final Pattern[] exclude;

    /** Per match pattern, per {@link #GROUPS} entry: its group number, or -1. */
    private final int[][] groups;

    Step(Signature signature) {
      this.signature = signature;
      this.match = signature.matchPatternList().toArray(Pattern[]::new);
      this.exclude = signature.excludePatternList().toArray(Pattern[]::new);
      this.groups = new int[match.length][GROUPS.size()];
      for (int p = 0; p < match.length; p++) {
        for (int g = 0; g < GROUPS.size(); g++) {
          groups[p][g] = match[p].namedGroups().getOrDefault(GROUPS.get(g), -1);
        }
      }
    }

    double seconds(String text) {
      if (signature.extracts()) {
        Map<String, String> f = signature.match(text);
        return f == null ? Double.NaN : StepTimeExtractor.seconds(f);
      }
      for (int p = 0; p < match.length; p++) {
        Matcher m = match[p].matcher(text);
        if (m.find()) {
          for (Pattern x : exclude) {
            if (x.matcher(text).find()) {
              return Double.NaN;
            }
          }
          for (int g = 0; g < GROUPS.size(); g++) {
            int n = groups[p][g];
            if (n >= 0) {
              String v = m.group(n);
              if (v != null && !v.isBlank()) {
                return StepTimeExtractor.seconds(GROUPS.get(g), v.strip());
              }
            }
          }
          return Double.NaN;
        }
      }
      return Double.NaN;
    }
  }

  private static double seconds(Map<String, String> f) {
    for (String g : GROUPS) {
      String v = f.get(g);
      if (v != null) {
        return seconds(g, v);
      }
    }
    return Double.NaN;
  }

  /** {@code value} of group {@code group} in seconds per step, or NaN. */
  private static double seconds(String group, String value) {
    try {
      double v = Double.parseDouble(value);
      return switch (group) {
        case "seconds_per_step" -> v;
        case "ms_per_step" -> v / 1000.0;
        default -> 1.0 / v; // steps_per_second, samples_per_second
      };
    } catch (NumberFormatException e) {
      return Double.NaN; // e.g. tqdm's "?it/s" before the first step
    }
  }

  @Override
  public String toString() {
    return "StepTimeExtractor" + Arrays.toString(ids().toArray());
  }
}
