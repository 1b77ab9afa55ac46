package dev.cudawatch.processor.functions;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.Incident;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.util.Collector;
import org.junit.jupiter.api.Test;

class IncidentAlertsTest {
  private static Incident incident(String id, boolean root, String severity) {
    return Incident.builder(id, "cuda_oom")
        .root(root, root ? null : "r")
        .severity(severity)
        .suspect("application")
        .signature("s")
        .fields(Map.of())
        .summary("sum")
        .explanation("exp")
        .nextSteps(List.of("step"))
        .host("node-1")
        .job("job-1")
        .source("/l")
        .line(3)
        .firstRecordId("rid")
        .eventTime(Records.T0)
        .detectedTime(Records.T0)
        .excerpt(List.of())
        .build();
  }

  private static List<Alert> run(Incident i) {
    List<Alert> out = new ArrayList<>();
    new IncidentAlerts()
        .flatMap(
            i,
            new Collector<>() {
              @Override
              public void collect(Alert a) {
                out.add(a);
              }

              @Override
              public void close() {}
            });
    return out;
  }

  @Test
  void onlyRootsThatNeedAPersonAlert() {
    assertEquals(1, run(incident("a", true, "error")).size());
    assertEquals(0, run(incident("b", false, "error")).size());
    assertEquals(0, run(incident("c", true, "warning")).size());
  }

  @Test
  void theFingerprintIsStable() {
    Alert a = run(incident("a", true, "critical")).get(0);
    assertEquals(a.fingerprint(), run(incident("a", true, "critical")).get(0).fingerprint());
    assertEquals("GpuJobFailure", a.alertName());
    assertEquals("sum", a.annotations().get("summary"));
    assertEquals(Alert.State.FIRING, a.state());
    assertEquals(a.startsAt().plus(IncidentAlerts.ACTIVE_FOR), a.endsAt(), "expires by itself");
  }
}
