package dev.cudawatch.diagnosis.catalog;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
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
}
