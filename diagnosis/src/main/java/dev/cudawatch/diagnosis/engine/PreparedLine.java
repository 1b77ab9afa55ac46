package dev.cudawatch.diagnosis.engine;

import com.google.re2j.Matcher;
import dev.cudawatch.diagnosis.catalog.Catalog;
import java.util.Map;

/**
 * The part of classifying a line that depends on the line alone: its normalised text, the
 * signatures its keywords select and each one's match, the exception type and framework it names.
 * Each is worked out once, when first asked for; {@link #prepare} works out all of them, so a
 * worker thread can do it ahead of the stream's {@link StreamClassifier}, which then does only what
 * depends on the stream (grouping, episodes). Confined to one thread at a time.
 */
public final class PreparedLine {
  private static final Object NONE = new Object();
  private static final int[] NO_CANDIDATES = new int[0];

  final String raw;
  final NormalizedLine normalized;
  private int[] candidates;
  private Object[] matches;
  private Object exceptionType;
  private Object framework;

  public PreparedLine(String raw) {
    this.raw = raw;
    this.normalized = LineNormalizer.normalize(raw);
  }

  String text() {
    return normalized.text();
  }

  /**
   * Does the parts the stream's classifier will read now (on a worker thread): the candidates'
   * matches up to the first that matches (the classifier rarely looks past it, and works out any
   * later one itself), and the exception type and framework of a line that matched.
   */
  public PreparedLine prepare(Catalog catalog) {
    int[] c = candidates(catalog, new long[catalog.keywords().maskWords()]);
    for (int k = 0; k < c.length; k++) {
      if (match(catalog, k) != null) {
        exceptionType();
        framework();
        break;
      }
    }
    return this;
  }

  /**
   * Indexes of the signatures the line's keywords select, in the catalog's order.
   *
   * @param scratch a mask of {@link dev.cudawatch.diagnosis.catalog.KeywordMatcher#maskWords}
   *     words, overwritten
   */
  int[] candidates(Catalog catalog, long[] scratch) {
    if (candidates == null) {
      java.util.Arrays.fill(scratch, 0L);
      if (!catalog.keywords().scan(text(), scratch)) {
        candidates = NO_CANDIDATES;
      } else {
        int count = 0;
        for (long w : scratch) {
          count += Long.bitCount(w);
        }
        int[] c = new int[count];
        int j = 0;
        for (int w = 0; w < scratch.length; w++) {
          for (long bits = scratch[w]; bits != 0; bits &= bits - 1) {
            c[j++] = (w << 6) + Long.numberOfTrailingZeros(bits);
          }
        }
        candidates = c;
      }
      matches = new Object[candidates.length];
    }
    return candidates;
  }

  /** The fields of candidate {@code k}'s match, or null when it does not match. */
  @SuppressWarnings("unchecked")
  Map<String, String> match(Catalog catalog, int k) {
    Object m = matches[k];
    if (m == null) {
      Map<String, String> fields = catalog.signatures().get(candidates[k]).match(text());
      matches[k] = fields == null ? NONE : fields;
      return fields;
    }
    return m == NONE ? null : (Map<String, String>) m;
  }

  /** The Python exception type the line starts with, or null. */
  String exceptionType() {
    if (exceptionType == null) {
      Matcher et = FrameworkSniffer.EXCEPTION_TYPE.matcher(text());
      exceptionType = et.find() ? et.group(1) : NONE;
    }
    return exceptionType == NONE ? null : (String) exceptionType;
  }

  /** The framework the line's wording belongs to, or null. */
  String framework() {
    if (framework == null) {
      String f = FrameworkSniffer.detect(text());
      framework = f == null ? NONE : f;
    }
    return framework == NONE ? null : (String) framework;
  }
}
