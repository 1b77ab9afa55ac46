package dev.cudawatch.bench;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cudawatch.common.wire.Incident;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Attribution accuracy: of the detected incidents the truth places on a rank, how many name the
 * right job, rank and GPU, how many a wrong one, and how many leave it unknown, per launch (how the
 * simulated job's ranks were started) and in all.
 */
final class AttributionScore {
  static final List<String> FIELDS = List.of("job", "rank", "gpu");

  /** launch -> {incidents, then per field: correct, wrong, unknown; then all three correct}. */
  private final Map<String, int[]> byLaunch = new TreeMap<>();

  private final int[] total = new int[11];

  /** Scores {@code i} against the labels of the expectation it matched. */
  void add(JsonNode truth, Incident i) {
    if (truth == null || !truth.has("job") || !truth.has("rank")) {
      return; // node-level (kernel, memory): nothing to attribute to a rank
    }
    String launch = truth.path("launch").asText("unknown launch");
    int[] row = byLaunch.computeIfAbsent(launch, k -> new int[11]);
    boolean allRight = true;
    for (int f = 0; f < FIELDS.size(); f++) {
      String want = truth.path(FIELDS.get(f)).asText();
      String got = detected(i, FIELDS.get(f));
      int slot = got == null || got.equals("unknown") ? 3 : got.equals(want) ? 1 : 2;
      allRight &= slot == 1;
      row[f * 3 + slot]++;
      total[f * 3 + slot]++;
    }
    row[0]++;
    total[0]++;
    if (allRight) {
      row[10]++;
      total[10]++;
    }
  }

  private static String detected(Incident i, String field) {
    Object v = field.equals("job") ? i.job() : i.fields().get(field);
    return v == null ? null : v.toString();
  }

  /** The Markdown table; rows per launch, then all. */
  String table() {
    StringBuilder md = new StringBuilder();
    md.append(
        "| attribution, by how the job was launched | incidents | job right | rank right | GPU right"
            + " | all three right | wrong (job/rank/GPU) | unknown (job/rank/GPU) |\n");
    md.append("|---|---:|---:|---:|---:|---:|---:|---:|\n");
    byLaunch.forEach((launch, r) -> row(md, launch, r));
    row(md, "**all incidents on a rank**", total);
    return md.toString();
  }

  private static void row(StringBuilder md, String name, int[] r) {
    int n = Math.max(1, r[0]);
    md.append(
        String.format(
            Locale.ROOT,
            "| %s | %d | %.3f | %.3f | %.3f | %.3f | %d/%d/%d | %d/%d/%d |%n",
            name,
            r[0],
            r[1] / (double) n,
            r[4] / (double) n,
            r[7] / (double) n,
            r[10] / (double) n,
            r[2],
            r[5],
            r[8],
            r[3],
            r[6],
            r[9]));
  }
}
