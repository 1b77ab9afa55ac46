package dev.cudawatch.processor.rules;

import java.io.Serializable;
import java.util.List;

/**
 * One detection rule as written in YAML.
 *
 * @param name alert name (unique; a site's rule replaces a shipped one of the same name)
 * @param type {@code count}, {@code spike} or {@code silence}
 * @param classes incident classes it counts
 * @param key fields that must match for incidents to count together
 * @param windowSeconds event-time window (for a spike: the recent window compared with the
 *     baseline)
 * @param threshold incidents (or distinct values of {@code distinct}) in the window that fire it
 * @param distinct when set, count distinct values of this field rather than incidents (distinct
 *     jobs on one GPU: a lemon GPU; distinct hosts at one user frame: a code bug)
 * @param severity critical, error, warning
 * @param baselineSeconds spike: the event-time window whose rate is the baseline
 * @param factor spike: how many times the baseline rate the recent window must reach
 * @param forSeconds silence: how long a job must stay silent after a failure
 * @param summary annotation template
 * @param description annotation text
 * @param require key fields an incident must have to be counted; an incident lacking any other key
 *     field is counted under the value {@code unknown} (e.g. per host when its GPU is unknown)
 */
public record RuleSpec(
    String name,
    String type,
    List<String> classes,
    List<String> key,
    Long windowSeconds,
    Integer threshold,
    String distinct,
    String severity,
    Long baselineSeconds,
    Double factor,
    Long forSeconds,
    String summary,
    String description,
    List<String> require)
    implements Serializable {

  public static final String COUNT = "count";
  public static final String SPIKE = "spike";
  public static final String SILENCE = "silence";

  public RuleSpec {
    classes = classes == null ? List.of() : List.copyOf(classes);
    key = key == null ? List.of() : List.copyOf(key);
    require = require == null ? List.of() : List.copyOf(require);
  }
}
