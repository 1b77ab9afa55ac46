package dev.cudawatch.processor.rules;

import java.util.Map;

/**
 * What a silence rule learns about one job: it wrote output, it failed, or it exited.
 *
 * @param rule silence rule name
 * @param key the rule name and the job's key fields, the operator's key
 * @param labels key fields by name, for the alert's labels
 * @param kind what happened
 * @param incidentClass for a failure, the incident's class
 * @param eventTimeMs when it happened, by the job's own clock (the record's or incident's time)
 */
public record JobSignal(
    String rule,
    String key,
    Map<String, String> labels,
    Kind kind,
    String incidentClass,
    long eventTimeMs) {

  /** What a job did. */
  public enum Kind {
    ACTIVITY,
    FAILURE,
    EXIT
  }
}
