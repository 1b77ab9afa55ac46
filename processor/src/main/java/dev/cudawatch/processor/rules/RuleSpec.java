package dev.cudawatch.processor.rules;

import java.io.Serializable;
import java.util.List;

/**
 * One detection rule as written in YAML.
 *
 * @param name alert name (unique; a site's rule replaces a shipped one of the same name)
 * @param type {@code count}
 * @param classes incident classes it counts
 * @param key fields that must match for incidents to count together
 * @param windowSeconds event-time window
 * @param threshold incidents (or distinct values of {@code distinct}) in the window that fire it
 * @param distinct when set, count distinct values of this field rather than incidents (distinct
 *     jobs on one GPU: a lemon GPU; distinct hosts at one user frame: a code bug)
 * @param severity critical, error, warning
 * @param summary annotation template
 * @param description annotation text
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
    String summary,
    String description)
    implements Serializable {

  public RuleSpec {
    classes = classes == null ? List.of() : List.copyOf(classes);
    key = key == null ? List.of() : List.copyOf(key);
  }
}
