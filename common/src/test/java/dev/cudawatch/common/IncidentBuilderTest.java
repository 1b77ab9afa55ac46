package dev.cudawatch.common;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.WireJson;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class IncidentBuilderTest {
  @Test
  void theBuilderSetsEachPartWhereTheConstructorWould() {
    Instant t = Instant.parse("2026-11-22T03:00:00Z");
    Incident built =
        Incident.builder("i1", "cuda_oom")
            .root(false, "r0")
            .count(3)
            .severity("error")
            .suspect("application")
            .signature("pytorch_cuda_oom")
            .fields(Map.of("gpu", 0L))
            .summary("s")
            .explanation("e")
            .nextSteps(List.of("n"))
            .host("h")
            .job("j")
            .source("src")
            .line(7)
            .firstRecordId("rec")
            .eventTime(t)
            .detectedTime(t.plusSeconds(1))
            .excerpt(List.of("x"))
            .verdict("application_fault")
            .build();
    Incident direct =
        new Incident(
            WireJson.VERSION,
            "i1",
            "cuda_oom",
            false,
            "r0",
            3,
            "error",
            "application",
            "pytorch_cuda_oom",
            Map.of("gpu", 0L),
            "s",
            "e",
            List.of("n"),
            "h",
            "j",
            "src",
            7,
            "rec",
            t,
            t.plusSeconds(1),
            List.of("x"),
            "application_fault");
    assertEquals(direct, built);
  }

  @Test
  void unsetPartsTakeTheRecordsDefaults() {
    Incident i = Incident.builder("i2", "gpu_xid").build();
    assertEquals(true, i.root());
    assertEquals(1, i.count());
    assertEquals(Map.of(), i.fields());
    assertEquals(List.of(), i.nextSteps());
  }
}
