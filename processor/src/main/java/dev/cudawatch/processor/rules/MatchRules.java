package dev.cudawatch.processor.rules;

import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.diagnosis.engine.IncidentAttribution;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichFlatMapFunction;
import org.apache.flink.metrics.Counter;
import org.apache.flink.util.Collector;

/**
 * Fans each incident out to the count and spike rules of its class, keyed by the rules' key fields.
 * A rule never skips an incident silently: a key field the incident lacks is counted under {@value
 * #UNKNOWN} (the rule's alert says so and which attribution sources were tried), unless the rule
 * lists the field under {@code require}; what is still left out is counted in {@code
 * cudawatch_rule_incidents_skipped_total{rule,reason}}.
 */
public final class MatchRules extends RichFlatMapFunction<Incident, RuleEvent> {
  private static final long serialVersionUID = 1L;

  /** The value a key field takes when the incident does not know it. */
  public static final String UNKNOWN = "unknown";

  /** Reasons are bounded (missing field names), so the metric's labels stay few. */
  public static final String SKIPPED = "cudawatch_rule_incidents_skipped_total";

  private final RuleSet rules;
  private transient Map<String, Counter> skipped;

  public MatchRules(RuleSet rules) {
    this.rules = rules;
  }

  @Override
  public void open(OpenContext ctx) {
    skipped = new HashMap<>();
  }

  @Override
  public void flatMap(Incident i, Collector<RuleEvent> out) {
    if (!i.root()) {
      return; // consequences describe the same failure: count roots only
    }
    long t = (i.eventTime() != null ? i.eventTime() : i.detectedTime()).toEpochMilli();
    for (RuleSpec r : rules.rules()) {
      if (RuleSpec.SILENCE.equals(r.type()) || !r.classes().contains(i.incidentClass())) {
        continue;
      }
      Map<String, String> labels = new LinkedHashMap<>();
      List<String> unknown = new ArrayList<>();
      String missingRequired = null;
      for (String k : r.key()) {
        String v = value(i, k);
        if (v == null) {
          if (r.require().contains(k)) {
            missingRequired = k;
            break;
          }
          unknown.add(k);
          v = UNKNOWN;
        }
        labels.put(k, v);
      }
      if (missingRequired != null) {
        skip(r, "required_" + missingRequired + "_missing");
        continue;
      }
      String distinct = r.distinct() == null ? i.id() : value(i, r.distinct());
      if (distinct == null) {
        // an unknown job is not a distinct job: counting it would invent a lemon GPU
        skip(r, "distinct_" + r.distinct() + "_missing");
        continue;
      }
      String note =
          unknown.isEmpty()
              ? null
              : String.join(", ", unknown)
                  + " unknown: the incidents did not name it; attribution sources tried: "
                  + IncidentAttribution.tried(i.fields());
      String key = RuleKeys.of(r.name(), List.copyOf(labels.values()));
      out.collect(new RuleEvent(r.name(), r.type(), key, labels, i.id(), t, distinct, note));
    }
  }

  private void skip(RuleSpec r, String reason) {
    if (skipped == null) {
      return; // used outside a Flink task (plain unit calls): nothing to report to
    }
    skipped
        .computeIfAbsent(
            r.name() + "\n" + reason,
            k ->
                getRuntimeContext()
                    .getMetricGroup()
                    .addGroup("rule", r.name())
                    .addGroup("reason", reason)
                    .counter(SKIPPED))
        .inc();
  }

  static String value(Incident i, String k) {
    return switch (k) {
      case "host" -> i.host();
      case "job" -> i.job();
      case "class" -> i.incidentClass();
      case "source" -> i.source();
      default -> i.fields().get(k) == null ? null : String.valueOf(i.fields().get(k));
    };
  }
}
