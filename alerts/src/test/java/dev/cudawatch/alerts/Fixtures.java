package dev.cudawatch.alerts;

import dev.cudawatch.common.wire.Incident;
import java.time.Instant;
import java.util.List;
import java.util.Map;

final class Fixtures {
  static final Instant T0 = Instant.parse("2026-11-22T03:00:00Z");

  private Fixtures() {}

  static Incident incident(String id, String cls, String host, String job, Instant t) {
    return Incident.builder(id, cls)
        .severity("error")
        .suspect("application")
        .signature("sig")
        .fields(Map.of("gpu", 0L))
        .summary("summary of " + id)
        .explanation("why")
        .nextSteps(List.of("do this"))
        .host(host)
        .job(job)
        .source("/logs/x.log")
        .line(7)
        .firstRecordId("rec-" + id)
        .eventTime(t)
        .detectedTime(t)
        .excerpt(List.of("line"))
        .build();
  }
}
