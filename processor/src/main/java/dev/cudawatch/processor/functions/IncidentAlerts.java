package dev.cudawatch.processor.functions;

import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.diagnosis.taxonomy.IncidentClass;
import dev.cudawatch.diagnosis.taxonomy.Taxonomy;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.apache.flink.api.common.functions.FlatMapFunction;
import org.apache.flink.util.Collector;

/**
 * Raises a firing alert for every root incident that needs a person (severity error or critical,
 * and every class with an alert of its own in taxonomy.yaml, as a memory leak's warning):
 * consequences and informational Xids do not page, nor do the ranks of a distributed job, which
 * page once for the job.
 */
public final class IncidentAlerts implements FlatMapFunction<Incident, Alert> {
  private static final long serialVersionUID = 1L;
  private static final Set<String> PAGING = Set.of("critical", "error");
  private static final String JOB_FAILURE = "GpuJobFailure";

  /** How long an alert about one incident stays active before it expires. */
  public static final java.time.Duration ACTIVE_FOR = java.time.Duration.ofHours(1);

  /** A rank's failure in a known job: reported with the job's other ranks, not on its own. */
  public static boolean rankOfAJob(Incident i) {
    return i.job() != null && i.fields().get("rank") != null && ownAlert(i) == null;
  }

  /** The alert name the incident's class pages under on its own (taxonomy.yaml), or null. */
  private static String ownAlert(Incident i) {
    return Taxonomy.builtIn().find(i.incidentClass()).map(IncidentClass::alert).orElse(null);
  }

  @Override
  public void flatMap(Incident i, Collector<Alert> out) {
    String own = ownAlert(i);
    if (!i.root() || !(PAGING.contains(i.severity()) || own != null)) {
      return;
    }
    if (rankOfAJob(i)) {
      return; // a distributed job's ranks page once, as its JobFailure (GroupJobFailures)
    }
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put("alertname", own != null ? own : JOB_FAILURE);
    labels.put("class", i.incidentClass());
    labels.put("severity", i.severity());
    labels.put("suspect", i.suspect());
    if (i.host() != null) {
      labels.put("host", i.host());
    }
    Object gpu = i.fields().get("gpu");
    if (gpu != null) {
      labels.put("gpu", gpu.toString()); // so routes and inhibitions can name the GPU
    }
    labels.put("incident_id", i.id());
    Map<String, String> annotations = new LinkedHashMap<>();
    annotations.put("summary", i.summary() == null ? i.incidentClass() : i.summary());
    annotations.put("description", i.explanation() == null ? "" : i.explanation());
    annotations.put("next_steps", String.join("\n", i.nextSteps()));
    if (i.job() != null) {
      annotations.put("job", i.job());
    }
    if (i.verdict() != null) {
      annotations.put("verdict", i.verdict()); // the kernel log says whose fault it is
    }
    if (i.source() != null) {
      annotations.put("source", i.source() + ":" + i.line());
    }
    Instant start = i.eventTime() != null ? i.eventTime() : i.detectedTime();
    // One incident's alert is news for an hour, then expires by itself (rule alerts resolve)
    Instant end = start.plus(ACTIVE_FOR);
    out.collect(
        new Alert(
            WireJson.VERSION,
            Alert.fingerprintOf(labels),
            Alert.State.FIRING,
            labels,
            annotations,
            start,
            end));
  }
}
