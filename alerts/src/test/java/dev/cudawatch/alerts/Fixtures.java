package dev.cudawatch.alerts;

import dev.cudawatch.common.wire.Incident;
import java.time.Instant;
import java.util.List;
import java.util.Map;

final class Fixtures {
  static final Instant T0 = Instant.parse("2026-11-22T03:00:00Z");

  private Fixtures() {}

  static Incident incident(String id, String cls, String host, String job, Instant t) {
    return new Incident(
        1,
        id,
        cls,
        true,
        null,
        1,
        "error",
        "application",
        "sig",
        Map.of("gpu", 0L),
        "summary of " + id,
        "why",
        List.of("do this"),
        host,
        job,
        "/logs/x.log",
        7,
        "rec-" + id,
        t,
        t,
        List.of("line"),
        null);
  }
}
