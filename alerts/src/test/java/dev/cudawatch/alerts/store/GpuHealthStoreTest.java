package dev.cudawatch.alerts.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.wire.Action;
import dev.cudawatch.common.wire.Incident;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class GpuHealthStoreTest {
  private static final Instant T0 = Instant.parse("2026-11-22T03:00:00Z");

  static Action rec(
      String id,
      String what,
      String host,
      String gpu,
      String uuid,
      int level,
      int recoveries,
      long at) {
    return new Action(
        1,
        id,
        Action.RECOMMENDATION,
        what,
        "why " + id,
        host,
        gpu,
        uuid,
        "job-1",
        79,
        "inc-" + id,
        level,
        recoveries,
        recoveries + level,
        level > 0 ? 600.0 : null,
        T0.plusSeconds(at),
        null);
  }

  @Test
  void keepsTheLatestStateAndCountsResetsAndReboots() {
    GpuHealthStore s = new GpuHealthStore(10);
    assertTrue(s.add(rec("1", "reset_gpu", "n1", "0", "GPU-a", 0, 1, 0)));
    assertTrue(s.add(rec("2", "reboot_node", "n1", "0", "GPU-a", 0, 2, 60)));
    assertTrue(s.add(rec("3", "inspect", "n1", "0", "GPU-a", 1, 2, 120)));
    var g = s.get("GPU-a").orElseThrow();
    assertEquals(1, g.ladderLevel());
    assertEquals("inspect", g.recommendation());
    assertEquals(1, g.resetsSeen());
    assertEquals(1, g.rebootsSeen());
    assertEquals(600.0, g.mtbiSeconds());
    assertEquals(List.of("3", "2", "1"), g.recent().stream().map(Action::id).toList());
  }

  @Test
  void aRecommendationReadAgainIsIgnoredAndCounted() {
    GpuHealthStore s = new GpuHealthStore(10);
    s.add(rec("1", "reset_gpu", "n1", "0", null, 0, 1, 0));
    assertFalse(s.add(rec("1", "reset_gpu", "n1", "0", null, 0, 1, 0)));
    assertEquals(1, s.get("n1/0").orElseThrow().resetsSeen());
    assertEquals(1, s.duplicates());
  }

  @Test
  void anOlderRecommendationArrivingLateDoesNotReplaceTheState() {
    GpuHealthStore s = new GpuHealthStore(10);
    s.add(rec("2", "rma", "n1", "0", "GPU-a", 2, 2, 100));
    s.add(rec("1", "reset_gpu", "n1", "0", "GPU-a", 0, 1, 10));
    assertEquals("rma", s.get("GPU-a").orElseThrow().recommendation());
    assertEquals(2, s.get("GPU-a").orElseThrow().recent().size());
  }

  @Test
  void boundedToCapacityTheLeastRecentlyUpdatedLeavesAndIsCounted() {
    GpuHealthStore s = new GpuHealthStore(2);
    s.add(rec("a", "reset_gpu", "n1", "0", null, 0, 1, 0));
    s.add(rec("b", "reset_gpu", "n1", "1", null, 0, 1, 1));
    s.add(rec("a2", "reset_gpu", "n1", "0", null, 0, 2, 2)); // n1/0 updated: n1/1 is oldest
    s.add(rec("c", "reset_gpu", "n2", "0", null, 0, 1, 3));
    assertEquals(2, s.size());
    assertEquals(1, s.evicted());
    assertTrue(s.get("n1/1").isEmpty());
    assertTrue(s.get("n1/0").isPresent());
    for (int i = 0; i < 100; i++) {
      s.add(rec("x" + i, "reset_gpu", "n9", "" + i, "GPU-" + i, 0, 1, 10 + i));
    }
    assertEquals(2, s.size());
    assertEquals(101, s.evicted());
  }

  @Test
  void historyPerGpuIsBounded() {
    GpuHealthStore s = new GpuHealthStore(2);
    for (int i = 0; i < 50; i++) {
      s.add(rec("r" + i, "check_slow_gpu", "n1", "0", null, 0, 0, i));
    }
    var g = s.get("n1/0").orElseThrow();
    assertEquals(GpuHealthStore.HISTORY, g.recent().size());
    assertEquals("r49", g.recent().get(0).id());
  }

  @Test
  void shadowAlertsAndRecommendationsWithoutAGpuAreNotHeld() {
    GpuHealthStore s = new GpuHealthStore(2);
    assertFalse(
        s.add(
            new Action(
                1,
                "s",
                Action.SHADOW_ALERT,
                "GpuJobFailure",
                "r",
                "n1",
                "0",
                null,
                null,
                null,
                null,
                0,
                0,
                0,
                null,
                T0,
                Map.of("alertname", "GpuJobFailure"))));
    assertFalse(s.add(rec("n", "reset_gpu", "n1", null, null, 0, 1, 0)));
    assertEquals(0, s.size());
  }

  @Test
  void anIncidentNamingOnlyTheIndexFindsTheGpuKnownByUuid() {
    GpuHealthStore s = new GpuHealthStore(10);
    s.add(rec("1", "inspect", "n1", "2", "GPU-a", 1, 2, 0));
    Incident byIndex = incident("n1", Map.of("gpu", 2L));
    Incident byUuid = incident("n1", Map.of("gpu_uuid", "GPU-a"));
    Incident other = incident("n1", Map.of("gpu", 3L));
    assertEquals("GPU-a", s.forIncident(byIndex).orElseThrow().key());
    assertEquals("GPU-a", s.forIncident(byUuid).orElseThrow().key());
    assertTrue(s.forIncident(other).isEmpty());
    assertEquals(1, s.onHost("n1").size());
    assertTrue(s.onHost("n2").isEmpty());
  }

  private static Incident incident(String host, Map<String, Object> fields) {
    return Incident.builder("i", "gpu_xid")
        .severity("critical")
        .suspect("hardware")
        .signature("sig")
        .fields(fields)
        .summary("s")
        .explanation("e")
        .nextSteps(List.of())
        .host(host)
        .job("j")
        .source("kern.log")
        .line(1)
        .firstRecordId("r")
        .eventTime(T0)
        .detectedTime(T0)
        .excerpt(List.of())
        .build();
  }
}
