package dev.cudawatch.diagnosis.jobs;

import dev.cudawatch.common.wire.Incident;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Incidents to a job's culprit, for the offline report. */
public final class JobVerdicts {
  private JobVerdicts() {}

  /**
   * A per-rank log's name: {@code rank1.log}, {@code rank-1.stderr.log}, {@code rank_1.out}, or
   * torchrun's {@code --log-dir} layout {@code attempt_0/1/stderr.log}.
   */
  private static final Pattern RANK_FILE =
      Pattern.compile(
          "(?:(?:^|[/_.-])rank[-_]?(\\d{1,6})(?:[/_.-][^/]*)?$|/attempt_\\d+/(\\d{1,6})/std(?:out|err)\\.log$)");

  /** The culprit of one job's incidents, or null when there are none. */
  public static Culprit of(List<Incident> incidents) {
    return ofFiles(Map.of("", incidents));
  }

  /**
   * The culprit of one job's files: an incident that names no rank takes the rank its file's name
   * gives (a per-rank log), so a device assert printed without a prefix still has its rank.
   */
  public static Culprit ofFiles(Map<String, List<Incident>> byFile) {
    List<RankEvidence> ev = new ArrayList<>();
    byFile.forEach(
        (file, incidents) -> {
          Long fileRank = rankOfFile(file);
          for (Incident i : incidents) {
            RankEvidence e = RankEvidence.of(i);
            ev.add(e.rank() == null && fileRank != null ? e.withRank(fileRank) : e);
          }
        });
    return CulpritAnalysis.analyze(ev);
  }

  /** The rank a per-rank log's name gives, or null. */
  public static Long rankOfFile(String file) {
    if (file == null) {
      return null;
    }
    Matcher m = RANK_FILE.matcher(file.replace('\\', '/'));
    if (!m.find()) {
      return null;
    }
    return Long.valueOf(m.group(1) != null ? m.group(1) : m.group(2));
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
