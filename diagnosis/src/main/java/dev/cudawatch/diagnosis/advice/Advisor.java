package dev.cudawatch.diagnosis.advice;

import dev.cudawatch.diagnosis.taxonomy.AdviceLogic;
import dev.cudawatch.diagnosis.taxonomy.IncidentClass;
import dev.cudawatch.diagnosis.taxonomy.Taxonomy;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What a person on call needs to know about an incident, specific to its fields: the class's
 * explanation and next steps from taxonomy.yaml, rendered over the fields, or the advice its logic
 * ({@link OomAdvice}, {@link NcclAdvice}, {@link AssertAdvice}, {@link XidAdvice}) computes.
 */
public final class Advisor {
  private final Taxonomy taxonomy;
  private final OomAdvice oom = new OomAdvice();
  private final NcclAdvice nccl = new NcclAdvice();
  private final AssertAdvice asserts = new AssertAdvice();
  private final XidAdvice xid;

  public Advisor(Taxonomy taxonomy) {
    this.taxonomy = taxonomy;
    this.xid = new XidAdvice(taxonomy);
  }

  public Advice advise(String cls, Map<String, Object> f) {
    IncidentClass c = taxonomy.find(cls).orElse(null);
    if (c == null) {
      return new Advice("", List.of());
    }
    if (c.advice() != null) {
      FieldAdvice logic =
          switch (c.advice()) {
            case OOM -> oom;
            case NCCL -> nccl;
            case ASSERT -> asserts;
            case XID -> xid;
          };
      Advice specific = logic.advise(f);
      if (specific != null) {
        return specific;
      }
    }
    List<String> steps = new ArrayList<>(c.nextSteps().size());
    for (String s : c.nextSteps()) {
      steps.add(SummaryTemplate.render(s, f));
    }
    if (c.advice() == AdviceLogic.OOM) {
      steps.addAll(OomAdvice.frameworkSteps(f));
    }
    String why = c.explanation() == null ? "" : SummaryTemplate.render(c.explanation(), f);
    return new Advice(why, List.copyOf(steps));
  }
}
