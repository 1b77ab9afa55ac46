package dev.cudawatch.processor.rules;

import dev.cudawatch.common.wire.Incident;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.util.Collector;

/** Incidents and rule events for the rule operators' harness tests. */
final class RuleFixtures {
  static final RuleSet RULES = RuleSet.load(Map.of());

  private RuleFixtures() {}

  static Incident incident(String id, String cls, String host, long gpu, long t, boolean root) {
    return incident(id, cls, host, "job-1", Map.of("gpu", gpu), t, root);
  }

  static Incident incident(
      String id,
      String cls,
      String host,
      String job,
      Map<String, Object> fields,
      long t,
      boolean root) {
    Instant at = Instant.ofEpochMilli(t);
    return Incident.builder(id, cls)
        .root(root, root ? null : "r")
        .severity("error")
        .suspect("application")
        .signature("s")
        .fields(fields)
        .summary("s")
        .explanation("e")
        .nextSteps(List.of())
        .host(host)
        .job(job)
        .source("/l")
        .line(1)
        .firstRecordId("rec-" + id)
        .eventTime(at)
        .detectedTime(at)
        .excerpt(List.of())
        .build();
  }

  static List<RuleEvent> match(RuleSet rules, Incident i) {
    List<RuleEvent> out = new ArrayList<>();
    new MatchRules(rules)
        .flatMap(
            i,
            new Collector<>() {
              @Override
              public void collect(RuleEvent e) {
                out.add(e);
              }

              @Override
              public void close() {}
            });
    return out;
  }
}
