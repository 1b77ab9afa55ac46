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
    return new Incident(
        1,
        id,
        cls,
        root,
        root ? null : "r",
        1,
        "error",
        "application",
        "s",
        fields,
        "s",
        "e",
        List.of(),
        host,
        job,
        "/l",
        1,
        "rec-" + id,
        at,
        at,
        List.of(),
        null);
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
