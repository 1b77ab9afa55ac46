package dev.cudawatch.diagnosis.catalog;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class KeywordMatcherTest {
  private final KeywordMatcher m =
      new KeywordMatcher(
          List.of(Map.entry("cuda error", 0), Map.entry("error", 1), Map.entry("xid", 70)), 71);

  @Test
  void findsOverlappingKeywordsCaseInsensitively() {
    long[] mask = new long[m.maskWords()];
    assertTrue(m.scan("RuntimeError: CUDA ERROR: boom", mask));
    assertArrayEquals(new long[] {0b11, 0}, mask);
  }

  @Test
  void signaturesPast64UseTheSecondWord() {
    long[] mask = new long[m.maskWords()];
    assertTrue(m.scan("NVRM: Xid (PCI:0000:3b:00): 79", mask));
    assertArrayEquals(new long[] {0, 1L << 6}, mask);
  }

  @Test
  void ordinaryLinesHitNothing() {
    long[] mask = new long[m.maskWords()];
    assertFalse(m.scan("step 10 | loss 0.123 | lr 3e-4 | 1.2 it/s \u2588\u2588\u2588", mask));
  }

  /**
   * Against the plain definition (a signature is flagged when the lower-cased text contains one of
   * its keywords), on random keyword sets and texts over a small alphabet, so keywords overlap,
   * nest and share suffixes (every output path of the automaton), with signatures past 64.
   */
  @Test
  void flagsExactlyTheSignaturesWhoseKeywordsOccur() {
    SplittableRandom r = new SplittableRandom(35);
    String alphabet = "abAB/ =xé";
    for (int round = 0; round < 300; round++) {
      int signatures = 1 + r.nextInt(100);
      List<Map.Entry<String, Integer>> keywords = new ArrayList<>();
      for (int k = 0, n = 1 + r.nextInt(30); k < n; k++) {
        keywords.add(Map.entry(random(r, "abAB/ =x", 1 + r.nextInt(4)), r.nextInt(signatures)));
      }
      KeywordMatcher km = new KeywordMatcher(keywords, signatures);
      for (int t = 0; t < 50; t++) {
        String text = random(r, alphabet, r.nextInt(40));
        long[] want = new long[km.maskWords()];
        for (var kw : keywords) {
          if (text.toLowerCase(Locale.ROOT).contains(kw.getKey().toLowerCase(Locale.ROOT))) {
            want[kw.getValue() >> 6] |= 1L << (kw.getValue() & 63);
          }
        }
        long[] got = new long[km.maskWords()];
        boolean hit = km.scan(text, got);
        assertArrayEquals(want, got, keywords + " in '" + text + "'");
        assertEquals(Arrays.stream(want).anyMatch(w -> w != 0), hit, text);
      }
    }
  }

  private static String random(SplittableRandom r, String alphabet, int length) {
    StringBuilder b = new StringBuilder(length);
    for (int i = 0; i < length; i++) {
      b.append(alphabet.charAt(r.nextInt(alphabet.length())));
    }
    return b.toString();
  }
}
