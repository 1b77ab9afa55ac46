package dev.cudawatch.bench;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.Incident;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Compares detections with the simulator's ground truth. An incident matches an expected one by
 * class, root or consequence, host, and the rank's stream (job and rank) or the GPU for memory
 * trends; an alert matches by name and the expected labels. Each expectation is matched once.
 */
final class Scoring {
  private Scoring() {}

  static String report(
      List<JsonNode> truth,
      List<Incident> incidents,
      List<Alert> alerts,
      List<String> scoredRules) {
    Map<String, Integer> expected = new HashMap<>();
    Map<String, String> classOf = new HashMap<>();
    Map<String, JsonNode> labelsOf = new HashMap<>();
    List<String> expectedAlerts = new ArrayList<>();
    int realTimeOnly = 0;
    for (JsonNode e : truth) {
      if (HealthScoring.owns(e)) {
        continue;
      }
      if (e.path("needs_real_time").asBoolean()) {
        realTimeOnly++;
        continue;
      }
      JsonNode l = e.get("labels");
      if (e.get("type").asText().equals("incident")) {
        String k =
            key(
                e.get("name").asText(),
                e.get("root").asBoolean(),
                l.path("host").asText(),
                l.has("job") ? l.get("job").asText() + "/rank-" + l.get("rank").asText() : null,
                e.get("name").asText().equals("memory_leak") ? l.path("gpu").asText() : null);
        expected.merge(k, 1, Integer::sum);
        labelsOf.put(k, l);
        classOf.put(
            k, e.get("name").asText() + (e.get("root").asBoolean() ? "" : " (consequence)"));
      } else {
        StringBuilder k = new StringBuilder(e.get("name").asText());
        new TreeMap<String, String>(
                new com.fasterxml.jackson.databind.ObjectMapper()
                    .convertValue(
                        l,
                        new com.fasterxml.jackson.core.type.TypeReference<
                            Map<String, String>>() {}))
            .forEach((a, b) -> k.append('|').append(a).append('=').append(b));
        expectedAlerts.add(k.toString());
      }
    }
    Map<String, int[]> byClass = new TreeMap<>(); // class -> {expected, tp, fp}
    for (var e : expected.entrySet()) {
      byClass.computeIfAbsent(classOf.get(e.getKey()), c -> new int[3])[0] += e.getValue();
    }
    Map<String, Integer> left = new HashMap<>(expected);
    AttributionScore attribution = new AttributionScore();
    for (Incident i : incidents) {
      if (i.verdict() != null || HealthScoring.OWNED.contains(i.incidentClass())) {
        continue; // the same incident again with a fleet verdict; or a health finding
      }
      String stream = rankStream(i.source());
      Object gpu = i.fields().get("gpu");
      String k =
          key(
              i.incidentClass(),
              i.root(),
              i.host(),
              stream,
              i.incidentClass().equals("memory_leak") && gpu != null ? gpu.toString() : null);
      String cls = i.incidentClass() + (i.root() ? "" : " (consequence)");
      int[] row = byClass.computeIfAbsent(cls, c -> new int[3]);
      Integer n = left.get(k);
      if (n != null && n > 0) {
        left.put(k, n - 1);
        row[1]++;
        attribution.add(labelsOf.get(k), i);
      } else {
        row[2]++;
      }
    }

    Map<String, int[]> byRule = new TreeMap<>();
    Map<String, Integer> unscored = new TreeMap<>();
    for (String r : scoredRules) {
      byRule.put(r, new int[3]);
    }
    for (String k : expectedAlerts) {
      byRule.computeIfAbsent(k.substring(0, k.indexOf('|')), r -> new int[3])[0]++;
    }
    List<String> pending = new ArrayList<>(expectedAlerts);
    List<String> spurious = new ArrayList<>();
    for (Alert a : alerts) {
      if (a.state() != Alert.State.FIRING
          || a.alertName().equals("GpuJobFailure")
          || HealthScoring.OWNED.contains(a.alertName())) {
        continue; // one per incident: scored with the incidents
      }
      if (!byRule.containsKey(a.alertName())) {
        unscored.merge(a.alertName(), 1, Integer::sum);
        continue;
      }
      String match = null;
      for (String k : pending) {
        if (k.startsWith(a.alertName() + "|") && labelsMatch(k, a.labels())) {
          match = k;
          break;
        }
      }
      int[] row = byRule.get(a.alertName());
      if (match != null) {
        pending.remove(match);
        row[1]++;
      } else {
        row[2]++;
        spurious.add(a.alertName() + " " + a.labels());
      }
    }

    StringBuilder md = new StringBuilder();
    md.append("| class | injected | detected | missed | spurious | precision | recall |\n");
    md.append("|---|---:|---:|---:|---:|---:|---:|\n");
    int[] total = new int[3];
    for (var e : byClass.entrySet()) {
      row(md, e.getKey(), e.getValue());
      for (int i = 0; i < 3; i++) {
        total[i] += e.getValue()[i];
      }
    }
    row(md, "**all incidents**", total);
    md.append('\n').append(attribution.table());
    md.append(
        "\n| rule | injected | fired as expected | missed | spurious | precision | recall |\n");
    md.append("|---|---:|---:|---:|---:|---:|---:|\n");
    for (var e : byRule.entrySet()) {
      row(md, e.getKey(), e.getValue());
    }
    if (!pending.isEmpty()) {
      md.append("\nMissed alerts: ").append(String.join("; ", pending)).append('\n');
    }
    if (!spurious.isEmpty()) {
      md.append("\nSpurious alerts: ").append(String.join("; ", spurious)).append('\n');
    }
    List<String> missedIncidents = new ArrayList<>();
    left.forEach(
        (k, n) -> {
          for (int i = 0; i < n; i++) {
            missedIncidents.add(k);
          }
        });
    if (!missedIncidents.isEmpty()) {
      md.append("\nMissed incidents: ")
          .append(String.join("; ", new TreeSet<>(missedIncidents)))
          .append('\n');
    }
    md.append("\nAlerts of rules the simulator injects no scenario for (not scored): ")
        .append(unscored.isEmpty() ? "none" : unscored.toString())
        .append(". Expectations that need real time (silence), not scored in a fast run: ")
        .append(realTimeOnly)
        .append(".\n");
    return md.toString();
  }

  private static void row(StringBuilder md, String name, int[] r) {
    int detected = r[1];
    int missed = r[0] - r[1];
    double precision = detected + r[2] == 0 ? 1 : detected / (double) (detected + r[2]);
    double recall = r[0] == 0 ? 1 : detected / (double) r[0];
    md.append(
        String.format(
            Locale.ROOT,
            "| %s | %d | %d | %d | %d | %.3f | %.3f |%n",
            name,
            r[0],
            detected,
            missed,
            r[2],
            precision,
            recall));
  }

  private static boolean labelsMatch(String key, Map<String, String> labels) {
    for (String kv : key.substring(key.indexOf('|') + 1).split("\\|")) {
      int eq = kv.indexOf('=');
      if (!kv.substring(eq + 1).equals(labels.get(kv.substring(0, eq)))) {
        return false;
      }
    }
    return true;
  }

  /**
   * "JOB/rank-N" from a rank's source: {@code run:JOB/rankN/stderr} as `cudawatch run` names it, or
   * a followed file /sim/HOST/JOB/rank-N.log; null for node logs.
   */
  static String rankStream(String source) {
    if (source != null && source.startsWith("run:")) {
      String[] p = source.substring(4).split("/");
      return p.length == 3 && p[1].startsWith("rank") ? p[0] + "/rank-" + p[1].substring(4) : null;
    }
    if (source == null || !source.endsWith(".log") || !source.contains("/rank-")) {
      return null;
    }
    String[] p = source.split("/");
    return p[p.length - 2] + "/" + p[p.length - 1].replace(".log", "");
  }

  private static String key(String cls, boolean root, String host, String stream, String gpu) {
    return cls + "|" + root + "|" + host + "|" + stream + "|" + gpu;
  }
}
