package dev.cudawatch.processor.rules;

import dev.cudawatch.common.wire.Incident;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.functions.FlatMapFunction;
import org.apache.flink.util.Collector;

/**
 * Fans each incident out to the count and spike rules of its class, keyed by the rules' key fields.
 */
public final class MatchRules implements FlatMapFunction<Incident, RuleEvent> {
  private static final long serialVersionUID = 1L;
  private final RuleSet rules;

  public MatchRules(RuleSet rules) {
    this.rules = rules;
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
      boolean complete = true;
      for (String k : r.key()) {
        String v = value(i, k);
        if (v == null) {
          complete = false; // an incident without the key field cannot be counted with others
          break;
        }
        labels.put(k, v);
      }
      String distinct = r.distinct() == null ? i.id() : value(i, r.distinct());
      if (complete && distinct != null) {
        String key = RuleKeys.of(r.name(), List.copyOf(labels.values()));
        out.collect(new RuleEvent(r.name(), r.type(), key, labels, i.id(), t, distinct));
      }
    }
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
