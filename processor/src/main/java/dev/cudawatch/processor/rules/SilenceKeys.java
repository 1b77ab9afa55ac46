package dev.cudawatch.processor.rules;

import java.util.LinkedHashMap;
import java.util.Map;

/** The key of a job for a silence rule, from its host and job id; null when the job is unknown. */
final class SilenceKeys {
  private SilenceKeys() {}

  static JobSignal signal(
      RuleSpec r,
      String host,
      String job,
      JobSignal.Kind kind,
      String incidentClass,
      long eventTimeMs) {
    if (job == null || job.isEmpty()) {
      return null;
    }
    Map<String, String> labels = new LinkedHashMap<>();
    for (String k : r.key()) {
      String v = k.equals("host") ? host : job;
      if (v == null) {
        return null;
      }
      labels.put(k, v);
    }
    String key = RuleKeys.of(r.name(), java.util.List.copyOf(labels.values()));
    return new JobSignal(r.name(), key, labels, kind, incidentClass, eventTimeMs);
  }
}
