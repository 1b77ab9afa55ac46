package dev.cudawatch.alerts.http;

import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.JobFailure;
import dev.cudawatch.diagnosis.jobs.Culprit;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** A failed job's culprit and evidence as the incident page's template sees it (plain strings). */
final class JobFailureView {
  /** Evidence sentences shown; the full list is in /api/jobs/{job}. */
  static final int MAX_EVIDENCE = 50;

  private JobFailureView() {}

  /**
   * The "Job failure" section of incident {@code i}. Every key is set: a missing one would resolve
   * to the incident's own value of that name in the template.
   */
  static Map<String, Object> of(JobFailure f, Incident i) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("jfJob", f.job());
    m.put("jfCulprit", culprit(f));
    m.put("jfRank", f.rank() == null ? "unknown" : f.rank().toString());
    m.put("jfHost", f.host() == null ? "unknown" : f.host());
    m.put("jfGpu", f.gpu() == null ? "unknown" : f.gpu());
    m.put("jfCause", causeWords(f.cause()));
    m.put("jfCauseId", f.cause() == null ? "" : f.cause());
    m.put("jfSummary", f.summary() == null ? "" : f.summary());
    List<String> evidence = f.evidence();
    m.put("jfEvidence", evidence.subList(0, Math.min(evidence.size(), MAX_EVIDENCE)));
    m.put("jfHasEvidence", !evidence.isEmpty());
    // a string: the template treats "" as false, but shows a 0
    m.put(
        "jfMoreEvidence",
        evidence.size() > MAX_EVIDENCE ? String.valueOf(evidence.size() - MAX_EVIDENCE) : "");
    m.put("jfIsRoot", i.id().equals(f.rootId()));
    m.put(
        "jfRootLink",
        f.rootId() == null || i.id().equals(f.rootId())
            ? ""
            : "/incident?id=" + IncidentPages.enc(f.rootId()));
    m.put("jfConsequences", f.consequenceCount());
    m.put("jfRanks", f.ranks());
    m.put("jfHosts", String.join(", ", f.hosts()));
    m.put("jfSpan", IncidentView.time(f.firstAt()) + " – " + IncidentView.time(f.lastAt()));
    m.put("jfApiLink", "/api/jobs/" + IncidentPages.enc(f.job()));
    return m;
  }

  /** "rank 1 on node-3, GPU 1", as short as what is known. */
  static String culprit(JobFailure f) {
    StringBuilder b = new StringBuilder(f.rank() == null ? "rank unknown" : "rank " + f.rank());
    if (f.host() != null) {
      b.append(" on ").append(f.host());
    }
    if (f.gpu() != null) {
      b.append(", GPU ").append(f.gpu());
    }
    return b.toString();
  }

  /**
   * How the culprit was found, for a person. The words of the processor's causes, kept here: the
   * alerts service reads the wire record, not the analysis that wrote it.
   */
  static String causeWords(String cause) {
    if (cause == null) {
      return "not stated (a record from an older processor): the job's root incident";
    }
    // the words are the diagnosis module's, where the analysis that names the cause lives
    return Culprit.Cause.of(cause).map(Culprit.Cause::words).orElse(cause);
  }
}
