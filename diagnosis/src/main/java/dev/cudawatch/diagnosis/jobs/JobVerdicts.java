package dev.cudawatch.diagnosis.jobs;

import dev.cudawatch.common.wire.Incident;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** Incidents to a job's culprit, for the offline report. */
public final class JobVerdicts {
  private JobVerdicts() {}

  /** The culprit of one job's incidents, or null when there are none. */
  public static Culprit of(List<Incident> incidents) {
    List<RankEvidence> ev = new ArrayList<>(incidents.size());
    for (Incident i : incidents) {
      ev.add(RankEvidence.of(i));
    }
    return CulpritAnalysis.analyze(ev);
  }

  /** Whether the incidents come from two or more ranks: a distributed job's combined output. */
  public static boolean severalRanks(List<Incident> incidents) {
    Set<Object> ranks = new HashSet<>();
    for (Incident i : incidents) {
      Object r = i.fields().get("rank");
      if (r != null && ranks.add(r) && ranks.size() > 1) {
        return true;
      }
    }
    return false;
  }
}
