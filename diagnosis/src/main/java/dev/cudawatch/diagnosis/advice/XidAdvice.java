package dev.cudawatch.diagnosis.advice;

import dev.cudawatch.diagnosis.taxonomy.Taxonomy;
import dev.cudawatch.diagnosis.taxonomy.XidInfo;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** The Xid's entry of NVIDIA's catalog: what it means, who it blames, what to do. */
final class XidAdvice implements FieldAdvice {
  private final Taxonomy taxonomy;

  XidAdvice(Taxonomy taxonomy) {
    this.taxonomy = taxonomy;
  }

  @Override
  public Advice advise(Map<String, Object> f) {
    if (!(f.get("xid") instanceof Number n)) {
      return null;
    }
    XidInfo x = taxonomy.xid(n.intValue()).orElse(null);
    if (x == null) {
      return null;
    }
    List<String> steps = new ArrayList<>();
    steps.add(taxonomy.action(x));
    if (x.causesLater()) {
      steps.add(
          "Xids that follow on this GPU (45, 63, 154, ...) are often its consequences: act on this one first.");
    }
    return new Advice(
        "Xid "
            + x.xid()
            + " ("
            + x.mnemonic()
            + "): "
            + x.meaning()
            + ". Verdict: "
            + x.verdict().id()
            + ".",
        steps);
  }
}
