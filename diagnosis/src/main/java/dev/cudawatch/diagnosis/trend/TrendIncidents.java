package dev.cudawatch.diagnosis.trend;

import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.diagnosis.advice.Advice;
import dev.cudawatch.diagnosis.advice.Advisor;
import dev.cudawatch.diagnosis.advice.FieldValues;
import dev.cudawatch.diagnosis.taxonomy.IncidentClass;
import dev.cudawatch.diagnosis.taxonomy.Taxonomy;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/** Turns a detected trend into a {@code memory_leak} incident. */
public final class TrendIncidents {
  /** The detector taxonomy.yaml names for the classes it produces, and their signature. */
  public static final String DETECTOR = "memory_trend";

  private static final IncidentClass LEAK = Taxonomy.builtIn().get("memory_leak");

  private TrendIncidents() {}

  public static Incident of(
      MemoryTrend t, Advisor advisor, String host, String source, long line, Instant now) {
    Map<String, Object> f = new LinkedHashMap<>();
    f.put("gpu", (long) t.at().gpu());
    if (t.at().pci() != null) {
      f.put("pci", t.at().pci());
    }
    f.put("growth_bytes_per_second", Math.round(t.growthBytesPerSecond()));
    f.put("predicted_seconds_to_full", Math.round(t.predictedSecondsToFull()));
    f.put("memory_used_bytes", t.at().usedBytes());
    f.put("memory_total_bytes", t.at().totalBytes());
    if (host != null) {
      f.put("host", host);
    }
    Advice a = advisor.advise(LEAK.id(), f);
    String summary =
        "GPU "
            + t.at().gpu()
            + " memory grows "
            + FieldValues.humanBytes(Math.round(t.growthBytesPerSecond()))
            + "/s: full in about "
            + Math.round(t.predictedSecondsToFull())
            + " s";
    String id =
        String.format(
            "%016x",
            (host + "|" + source + "|" + t.at().gpu() + "|" + t.at().epochMillis()).hashCode()
                & 0xffffffffL);
    return Incident.builder(id, LEAK.id())
        .severity(LEAK.severity())
        .suspect(LEAK.suspect())
        .signature(DETECTOR)
        .fields(f)
        .summary(summary)
        .explanation(a.explanation())
        .nextSteps(a.nextSteps())
        .host(host)
        .source(source)
        .line(line)
        .firstRecordId(source + "@" + line)
        .eventTime(Instant.ofEpochMilli(t.at().epochMillis()))
        .detectedTime(now)
        .build();
  }
}
