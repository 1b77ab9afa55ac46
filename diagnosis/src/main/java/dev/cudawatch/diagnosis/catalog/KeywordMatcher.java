package dev.cudawatch.diagnosis.catalog;

import dev.cudawatch.diagnosis.datafile.CatalogException;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Aho–Corasick automaton over the catalog's literal keywords, matched case-insensitively in one
 * pass. Almost every line of a training log holds no keyword, so this scan is the whole cost of
 * classifying it; regexes run only on the rare lines it flags.
 */
public final class KeywordMatcher {
  private final int classes;
  private final byte[] charClass = new byte[128];
  private final int[] delta;
  private final long[][] output;
  private final int words;
  private final List<String> literals;

  /**
   * @param keywords keyword text to the index of the signature it selects (many to one)
   * @param signatureCount number of signatures, to size the hit masks
   */
  public KeywordMatcher(List<Map.Entry<String, Integer>> keywords, int signatureCount) {
    this.words = Math.max(1, (signatureCount + 63) / 64);
    this.literals =
        keywords.stream().map(kw -> kw.getKey().toLowerCase(Locale.ROOT)).distinct().toList();
    int next = 1;
    for (var kw : keywords) {
      for (char c : kw.getKey().toLowerCase(Locale.ROOT).toCharArray()) {
        if (c >= 128) {
          throw new CatalogException("keyword '" + kw.getKey() + "' must be ASCII");
        }
        if (charClass[c] == 0) {
          if (next >= 127) {
            throw new CatalogException("keywords use too many distinct characters");
          }
          charClass[c] = (byte) next++;
        }
      }
    }
    // Upper-case letters share the class of their lower-case form.
    for (char c = 'A'; c <= 'Z'; c++) {
      charClass[c] = charClass[Character.toLowerCase(c)];
    }
    this.classes = next;

    // The trie is built straight into the transition table (0: no edge yet; the root is never a
    // child), then completed in place breadth-first: arrays, not boxed maps, since this runs
    // interpreted at every start-up.
    int maxStates = 1;
    for (var kw : keywords) {
      maxStates += kw.getKey().length();
    }
    int[] go = new int[maxStates * classes];
    long[][] out = new long[maxStates][];
    int n = 1;
    for (var kw : keywords) {
      int s = 0;
      for (char c : kw.getKey().toLowerCase(Locale.ROOT).toCharArray()) {
        int cls = charClass[c];
        int t = go[s * classes + cls];
        if (t == 0) {
          t = n++;
          go[s * classes + cls] = t;
        }
        s = t;
      }
      long[] mask = out[s] == null ? new long[words] : out[s];
      mask[kw.getValue() >> 6] |= 1L << (kw.getValue() & 63);
      out[s] = mask;
    }
    int[] fail = new int[n];
    int[] queue = new int[n];
    int head = 0;
    int tail = 0;
    for (int cls = 0; cls < classes; cls++) {
      if (go[cls] != 0) {
        queue[tail++] = go[cls];
      }
    }
    while (head < tail) {
      int s = queue[head++];
      if (out[fail[s]] != null) {
        long[] merged = out[s] == null ? new long[words] : out[s];
        long[] f = out[fail[s]];
        for (int w = 0; w < words; w++) {
          merged[w] |= f[w];
        }
        out[s] = merged;
      }
      for (int cls = 0; cls < classes; cls++) {
        int t = go[s * classes + cls];
        if (t == 0) {
          go[s * classes + cls] = go[fail[s] * classes + cls];
        } else {
          fail[t] = go[fail[s] * classes + cls];
          queue[tail++] = t;
        }
      }
    }
    // The scan walks row offsets (state * classes) rather than states, and a state with output
    // is entered through a negative entry (~row): one load per character and no multiply, and
    // the output table is read only on a hit.
    delta = new int[n * classes];
    for (int i = 0; i < delta.length; i++) {
      int t = go[i];
      delta[i] = out[t] != null ? ~(t * classes) : t * classes;
    }
    output = java.util.Arrays.copyOf(out, n);
  }

  /** The keywords, lower-cased: a prefilter that must flag every line this matcher flags. */
  public List<String> literals() {
    return literals;
  }

  /** Words in a hit mask. */
  public int maskWords() {
    return words;
  }

  /**
   * Scans {@code text} and ORs into {@code mask} the signatures whose keywords occur.
   *
   * @return true when any keyword occurred
   */
  public boolean scan(CharSequence text, long[] mask) {
    final int[] d = delta;
    final byte[] cc = charClass;
    int row = 0;
    boolean hit = false;
    for (int i = 0, n = text.length(); i < n; i++) {
      char c = text.charAt(i);
      int e = d[row + (c < 128 ? cc[c] : 0)];
      if (e >= 0) {
        row = e;
      } else {
        row = ~e;
        hit = true;
        long[] o = output[row / classes];
        for (int w = 0; w < o.length; w++) {
          mask[w] |= o[w];
        }
      }
    }
    return hit;
  }
}
