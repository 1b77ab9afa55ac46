package dev.cudawatch.processor.rules;

import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.WireJson;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/** Builds a rule's alert: labels from the rule and its key, annotations from its templates. */
final class RuleAlerts {
  private RuleAlerts() {}

  /** The key fields' values from an operator key ({@link RuleKeys}), named by the rule's key. */
  static Map<String, String> labelsFromKey(RuleSpec r, String key) {
    java.util.List<String> parts = RuleKeys.parse(key);
    Map<String, String> out = new LinkedHashMap<>();
    for (int i = 0; i < r.key().size() && i + 1 < parts.size(); i++) {
      out.put(r.key().get(i), parts.get(i + 1));
    }
    return out;
  }

  /**
   * The alert. {@code values} fill the summary's {@code {name}} placeholders beside the key fields,
   * and a {@code value} annotation carries the measured figure, as Prometheus' $value does.
   */
  static Alert alert(
      RuleSpec r,
      Map<String, String> key,
      Map<String, String> values,
      String value,
      Alert.State state,
      long startsAt,
      Long endsAt) {
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put("alertname", r.name());
    labels.put("severity", r.severity() == null ? "warning" : r.severity());
    labels.putAll(key);
    String summary = r.summary() == null ? r.name() : r.summary();
    for (var e : values.entrySet()) {
      summary = summary.replace("{" + e.getKey() + "}", e.getValue());
    }
    for (var e : key.entrySet()) {
      summary = summary.replace("{" + e.getKey() + "}", e.getValue());
    }
    Map<String, String> annotations = new LinkedHashMap<>();
    annotations.put("summary", summary);
    if (r.description() != null) {
      annotations.put("description", r.description());
    }
    annotations.put("value", value);
    return new Alert(
        WireJson.VERSION,
        Alert.fingerprintOf(labels),
        state,
        labels,
        annotations,
        Instant.ofEpochMilli(startsAt),
        endsAt == null ? null : Instant.ofEpochMilli(endsAt));
  }

  /**
   * The alert with an {@code unknown} annotation when a key field was counted as unknown: which
   * field, and the attribution sources that were tried. A person must not read "GPU unknown" as a
   * GPU named "unknown".
   */
  static Alert withUnknown(Alert a, Map<String, String> key, String unknown) {
    if (!key.containsValue(MatchRules.UNKNOWN)) {
      return a;
    }
    Map<String, String> annotations = new LinkedHashMap<>(a.annotations());
    annotations.put(
        "unknown",
        unknown != null ? unknown : "a key field was unknown: the incidents did not name it");
    return new Alert(
        a.v(), a.fingerprint(), a.state(), a.labels(), annotations, a.startsAt(), a.endsAt());
  }

  static String minutes(long seconds) {
    return seconds % 60 == 0 ? String.valueOf(seconds / 60) : String.format("%.1f", seconds / 60.0);
  }
}
