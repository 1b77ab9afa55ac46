package dev.cudawatch.processor.health;

import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.diagnosis.advice.Advice;
import dev.cudawatch.diagnosis.advice.Advisor;
import dev.cudawatch.diagnosis.taxonomy.IncidentClass;
import dev.cudawatch.diagnosis.taxonomy.Taxonomy;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/** Builds {@code slow_rank} and {@code job_slowdown} incidents with the taxonomy's advice. */
final class StepIncidents {
  static final String SLOW_RANK = "slow_rank";
  static final String JOB_SLOWDOWN = "job_slowdown";

  private static final Taxonomy TAXONOMY = Taxonomy.builtIn();
  private static final Advisor ADVISOR = new Advisor(TAXONOMY);

  private StepIncidents() {}

  static double round(double v) {
    return Math.round(v * 1000.0) / 1000.0;
  }

  static Incident slowRank(
      String job, int rank, RankPace p, double own, double peers, int ranks, long at, Instant now) {
    Map<String, Object> f = new LinkedHashMap<>();
    f.put("rank", (long) rank);
    if (p.gpu != null) {
      f.put("gpu", (long) p.gpu);
    }
    if (p.gpuUuid != null) {
      f.put("gpu_uuid", p.gpuUuid);
    }
    if (p.host != null) {
      f.put("host", p.host);
    }
    f.put("step_seconds", round(own));
    f.put("peer_step_seconds", round(peers));
    f.put("slowdown_ratio", round(own / peers));
    f.put("slow_for_seconds", (at - p.slowSince) / 1000);
    if (!Double.isNaN(p.ownBaseline)) {
      f.put("own_baseline_step_seconds", round(p.ownBaseline));
    }
    f.put("ranks", (long) ranks);
    String summary =
        String.format(
            "Rank %d of %s%s%s is %.2fx slower than its %d peers (%.3f s per step against %.3f s)",
            rank,
            job,
            p.host == null ? "" : " on " + p.host,
            p.gpu == null ? "" : " GPU " + p.gpu,
            own / peers,
            ranks - 1,
            own,
            peers);
    return build(SLOW_RANK, job + "|" + rank + "|" + p.slowSince, f, summary, job, p.host, at, now);
  }

  static Incident jobSlowdown(
      String job,
      double recent,
      double baseline,
      long changePoint,
      int ranks,
      long at,
      Instant now) {
    Map<String, Object> f = new LinkedHashMap<>();
    f.put("step_seconds", round(recent));
    f.put("baseline_step_seconds", round(baseline));
    f.put("slowdown_ratio", round(recent / baseline));
    f.put("change_point", Instant.ofEpochMilli(changePoint).toString());
    f.put("ranks", (long) ranks);
    String summary =
        String.format(
            "Job %s slowed down %.2fx since %s: %.3f s per step against %.3f s, on all %d ranks",
            job, recent / baseline, Instant.ofEpochMilli(changePoint), recent, baseline, ranks);
    return build(JOB_SLOWDOWN, job + "|" + changePoint, f, summary, job, null, at, now);
  }

  private static Incident build(
      String cls,
      String key,
      Map<String, Object> f,
      String summary,
      String job,
      String host,
      long at,
      Instant now) {
    IncidentClass c = TAXONOMY.get(cls);
    Advice a = ADVISOR.advise(cls, f);
    String id = cls + ":" + String.format("%016x", fnv(key));
    return Incident.builder(id, cls)
        .severity(c.severity())
        .suspect(c.suspect())
        .signature("step_time")
        .fields(f)
        .summary(summary)
        .explanation(a.explanation())
        .nextSteps(a.nextSteps())
        .host(host)
        .job(job)
        .source("step-times:" + job)
        .line(0)
        .firstRecordId(id)
        .eventTime(Instant.ofEpochMilli(at))
        .detectedTime(now)
        .build();
  }

  /** A stable 64-bit hash (String.hashCode is 32 bits): the same finding keeps its id. */
  static long fnv(String s) {
    long h = 0xcbf29ce484222325L;
    for (int i = 0; i < s.length(); i++) {
      h ^= s.charAt(i);
      h *= 0x100000001b3L;
    }
    return h;
  }
}
