package dev.cudawatch.diagnosis.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

class LineNormalizerTest {
  @Test
  void stripsAnsiColours() {
    assertEquals(
        "RuntimeError: boom",
        LineNormalizer.normalize("\u001b[31;1mRuntimeError\u001b[0m: boom").text());
  }

  @Test
  void takesTheRankPrefixOff() {
    NormalizedLine n = LineNormalizer.normalize("[rank12]:   File \"/a.py\", line 3, in f");
    assertEquals(12, n.rank());
    assertEquals("  File \"/a.py\", line 3, in f", n.text());
    assertEquals(3, LineNormalizer.normalize("[default3]:hello").rank());
  }

  @Test
  void leavesOrdinaryBracketsAlone() {
    NormalizedLine n = LineNormalizer.normalize("[rankless] text");
    assertNull(n.rank());
    assertEquals("[rankless] text", n.text());
  }

  @Test
  void keepsTheLastProgressState() {
    assertEquals("step=3", LineNormalizer.normalize("10%\r20%\rstep=3\r\n").text());
  }
}
