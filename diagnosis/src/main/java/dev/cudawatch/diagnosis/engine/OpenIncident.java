package dev.cudawatch.diagnosis.engine;

import java.io.Serializable;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.Map;

/** An incident still gathering lines and fields; part of a stream's checkpointed state. */
public final class OpenIncident implements Serializable {
  private static final long serialVersionUID = 1L;

  /** Excerpt lines kept per incident. */
  static final int MAX_EXCERPT = 12;

  String id;
  String incidentClass;
  String signatureId;
  boolean root;
  String rootId;
  int count = 1;
  LinkedHashMap<String, Object> fields = new LinkedHashMap<>();
  long firstLine;
  long lastLine;
  String firstRecordId;
  Instant eventTime;
  ArrayList<String> excerpt = new ArrayList<>();
  String framework;

  /** Suspect and severity the matched CUDA error states, or null for the class's defaults. */
  String suspect;

  String severity;

  /**
   * The job of the line that opened it: one stream (a node's kernel log) carries lines of several
   * jobs, and an incident settles while a later line's job is the stream's current one.
   */
  String job;

  /** Fields of a preamble line before the incident (NCCL version, PCI address): filled in last. */
  LinkedHashMap<String, Object> preamble;

  void fill(Map<String, Object> more) {
    for (var e : more.entrySet()) {
      fields.putIfAbsent(e.getKey(), e.getValue());
    }
  }

  void addExcerpt(String line) {
    if (excerpt.size() < MAX_EXCERPT) {
      excerpt.add(line.length() > 1000 ? line.substring(0, 1000) + "…" : line);
    }
  }

  public String id() {
    return id;
  }

  public String incidentClass() {
    return incidentClass;
  }

  public long firstLine() {
    return firstLine;
  }

  public Map<String, Object> fields() {
    return fields;
  }
}
