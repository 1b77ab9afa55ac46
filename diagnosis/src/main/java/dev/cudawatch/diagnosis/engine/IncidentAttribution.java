package dev.cudawatch.diagnosis.engine;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Decides an incident's job, rank and GPU fields from the line's text and the agent's metadata, and
 * records where each came from in the {@code attribution} field. The text is trusted first; a
 * device ordinal it prints is the job's own numbering, mapped to the physical GPU through the job's
 * visible devices when the agent knows them.
 */
public final class IncidentAttribution {
  /** Field of an incident holding the sources: field name to source, plus {@code tried}. */
  public static final String FIELD = "attribution";

  public static final String LOG_TEXT = "log text";

  private IncidentAttribution() {}

  /**
   * Fills rank, local_rank, gpu and gpu_uuid into {@code fields} and, for a line from the pipeline
   * ({@code meta} given), adds {@link #FIELD}.
   */
  static void apply(Map<String, Object> fields, Integer prefixRank, LineMeta meta) {
    Map<String, String> agent =
        meta != null && meta.attribution() != null ? meta.attribution() : Map.of();
    Map<String, String> attr = new LinkedHashMap<>();
    if (agent.containsKey("job")) {
      attr.put("job", agent.get("job"));
    }
    if (fields.get("rank") != null) {
      attr.put("rank", LOG_TEXT);
    } else if (prefixRank != null) {
      fields.put("rank", prefixRank.longValue());
      attr.put("rank", LOG_TEXT + " ([rankN]: prefix)");
    } else if (meta != null && meta.rank() != null) {
      fields.put("rank", meta.rank().longValue());
      attr.put("rank", agent.getOrDefault("rank", "agent"));
    }
    if (meta != null && meta.localRank() != null && fields.get("local_rank") == null) {
      fields.put("local_rank", meta.localRank().longValue());
      attr.put("local_rank", agent.getOrDefault("local_rank", "agent"));
    }
    if (fields.get("gpu") instanceof Number ordinal) {
      List<Long> visible = visible(agent.get("visible_gpus"));
      int o = ordinal.intValue();
      if (o >= 0 && o < visible.size()) {
        fields.put("gpu", visible.get(o));
        attr.put(
            "gpu",
            LOG_TEXT + " (device " + o + " of " + agent.getOrDefault("gpu", "the job") + ")");
      } else {
        attr.put("gpu", LOG_TEXT);
      }
    } else if (meta != null && meta.gpu() != null) {
      fields.put("gpu", meta.gpu().longValue());
      attr.put("gpu", agent.getOrDefault("gpu", "agent"));
    }
    if (meta != null && meta.gpuUuid() != null && fields.get("gpu_uuid") == null) {
      fields.put("gpu_uuid", meta.gpuUuid());
      attr.put("gpu_uuid", agent.getOrDefault("gpu_uuid", "agent"));
    }
    if (meta == null) {
      return; // offline classification: the text is all there is, nothing to say where from
    }
    String tried = agent.get("tried");
    attr.put("tried", tried == null || tried.isBlank() ? LOG_TEXT : LOG_TEXT + ", " + tried);
    fields.putIfAbsent(FIELD, attr);
  }

  /** The sources consulted for an incident's attribution, or "log text" when none is recorded. */
  public static String tried(Map<String, Object> fields) {
    return fields.get(FIELD) instanceof Map<?, ?> m && m.get("tried") != null
        ? m.get("tried").toString()
        : LOG_TEXT;
  }

  private static List<Long> visible(String csv) {
    List<Long> out = new ArrayList<>();
    if (csv == null || csv.isBlank()) {
      return out;
    }
    for (String s : csv.split(",")) {
      try {
        out.add(Long.valueOf(s.strip()));
      } catch (NumberFormatException e) {
        return List.of(); // a device the agent could not map: keep the ordinal as printed
      }
    }
    return out;
  }
}
