package dev.cudawatch.diagnosis.advice;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.diagnosis.taxonomy.Taxonomy;
import dev.cudawatch.diagnosis.taxonomy.XidInfo;
import java.util.Map;
import org.junit.jupiter.api.Test;

class XidAdviceTest {
  private final Taxonomy taxonomy = Taxonomy.builtIn();
  private final XidAdvice xid = new XidAdvice(taxonomy);

  @Test
  void everyXidOfTheCatalogIsExplainedWithAnAction() {
    for (XidInfo x : taxonomy.xids()) {
      Advice a = xid.advise(Map.of("xid", (long) x.xid()));
      assertTrue(
          a.explanation().startsWith("Xid " + x.xid() + " (" + x.mnemonic() + ")"),
          a.explanation());
      assertTrue(a.explanation().endsWith("Verdict: " + x.verdict().id() + "."), a.explanation());
      assertEquals(taxonomy.action(x), a.nextSteps().get(0));
      assertEquals(x.causesLater() ? 2 : 1, a.nextSteps().size(), "Xid " + x.xid());
    }
  }

  @Test
  void anXidThatCausesOthersSaysSo() {
    Advice a = xid.advise(Map.of("xid", 48L));
    assertTrue(a.nextSteps().get(1).contains("consequences"), a.nextSteps().toString());
  }

  @Test
  void anUnknownOrMissingCodeTakesTheClassAdvice() {
    assertNull(xid.advise(Map.of("xid", 999L)));
    assertNull(xid.advise(Map.of()));
  }
}
