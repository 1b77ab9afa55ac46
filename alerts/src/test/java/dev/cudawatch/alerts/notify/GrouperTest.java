package dev.cudawatch.alerts.notify;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.wire.Alert;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class GrouperTest {
  static final long S = 1000;

  static Alert alert(String name, String host, Alert.State state) {
    Map<String, String> labels = Map.of("alertname", name, "host", host, "severity", "critical");
    return new Alert(
        1,
        Alert.fingerprintOf(labels),
        state,
        labels,
        Map.of("summary", name + " on " + host),
        Instant.parse("2026-11-22T03:00:00Z"),
        state == Alert.State.RESOLVED ? Instant.parse("2026-11-22T03:10:00Z") : null);
  }

  private static Grouper grouper() {
    return new Grouper(List.of("alertname"), 10 * S, 60 * S, 3600 * S, 100, Map.of());
  }

  @Test
  void aNewGroupWaitsForCompanyThenSendsOnce() {
    Grouper g = grouper();
    assertTrue(g.offer(alert("X", "a", Alert.State.FIRING), 0));
    assertTrue(g.offer(alert("X", "b", Alert.State.FIRING), 3 * S));
    assertTrue(g.due(9 * S).isEmpty(), "group_wait not over");
    List<Grouper.Batch> due = g.due(10 * S);
    assertEquals(1, due.size());
    assertEquals(2, due.get(0).alerts().size(), "both alerts in one message");
    assertEquals(Map.of("alertname", "X"), due.get(0).groupLabels());
    assertTrue(g.due(11 * S).isEmpty(), "nothing new");
  }

  @Test
  void theSameStateAgainIsADuplicate() {
    Grouper g = grouper();
    g.offer(alert("X", "a", Alert.State.FIRING), 0);
    g.due(10 * S);
    assertFalse(g.offer(alert("X", "a", Alert.State.FIRING), 20 * S));
    assertTrue(g.due(100 * S).isEmpty());
  }

  @Test
  void changesWaitForTheGroupIntervalAndResolutionIsSentOnce() {
    Grouper g = grouper();
    g.offer(alert("X", "a", Alert.State.FIRING), 0);
    g.due(10 * S);
    g.offer(alert("X", "a", Alert.State.RESOLVED), 20 * S);
    assertTrue(g.due(30 * S).isEmpty(), "group_interval runs from the last message");
    List<Grouper.Batch> due = g.due(70 * S);
    assertEquals(1, due.size());
    assertEquals(Alert.State.RESOLVED, due.get(0).alerts().get(0).state());
    assertTrue(g.state().isEmpty(), "a resolved alert is forgotten once sent");
    assertTrue(g.due(10_000 * S).isEmpty());
  }

  @Test
  void aGroupStillFiringIsRepeatedAfterTheRepeatInterval() {
    Grouper g = grouper();
    g.offer(alert("X", "a", Alert.State.FIRING), 0);
    g.due(10 * S);
    assertTrue(g.due(3000 * S).isEmpty());
    assertEquals(1, g.due(3610 * S).size());
  }

  @Test
  void analertResolvedBeforeItWasSentIsNeverSent() {
    Grouper g = grouper();
    g.offer(alert("X", "a", Alert.State.FIRING), 0);
    assertFalse(g.offer(alert("X", "a", Alert.State.RESOLVED), 5 * S));
    assertTrue(g.due(100 * S).isEmpty());
    assertFalse(g.offer(alert("Y", "a", Alert.State.RESOLVED), 5 * S), "never heard of");
  }

  @Test
  void anAlertPastItsOwnEndResolvesOnceAndIsForgotten() {
    Grouper g = grouper();
    Alert a = alert("GpuJobFailure", "a", Alert.State.FIRING);
    Instant end = Instant.ofEpochMilli(1000 * S);
    Alert expiring =
        new Alert(1, a.fingerprint(), a.state(), a.labels(), a.annotations(), a.startsAt(), end);
    g.offer(expiring, 0);
    assertEquals(1, g.due(10 * S).size());
    assertTrue(g.due(999 * S).isEmpty(), "still active");
    List<Grouper.Batch> due = g.due(1000 * S);
    assertEquals(1, due.size());
    assertEquals(Alert.State.RESOLVED, due.get(0).alerts().get(0).state());
    assertTrue(g.state().isEmpty());
    // one that expires before it was ever sent is never sent
    Grouper h = grouper();
    h.offer(
        new Alert(
            1,
            a.fingerprint(),
            a.state(),
            a.labels(),
            a.annotations(),
            a.startsAt(),
            Instant.ofEpochMilli(5 * S)),
        0);
    assertTrue(h.due(20 * S).isEmpty());
    assertTrue(h.state().isEmpty());
  }

  @Test
  void groupsBeyondTheCapShareOneOverflowGroup() {
    Grouper g = new Grouper(List.of("alertname"), 0, 0, 3600 * S, 2, Map.of());
    for (String n : List.of("A", "B", "C", "D")) {
      g.offer(alert(n, "h", Alert.State.FIRING), 0);
    }
    assertEquals(3, g.state().size(), "two groups and the overflow");
    assertEquals(2, g.state().get(Grouper.OVERFLOW).members.size());
  }

  @Test
  void alertmanagerGetsOnlyChangesAndEveryFiringAlertEachResendInterval() {
    Grouper g = new Grouper(List.of(), 0, 0, 60 * S, 1, Map.of(), true);
    g.offer(alert("X", "a", Alert.State.FIRING), 0);
    g.offer(alert("X", "b", Alert.State.FIRING), 0);
    assertEquals(2, g.due(0).get(0).alerts().size());
    g.offer(alert("X", "c", Alert.State.FIRING), 10 * S);
    List<Grouper.Batch> change = g.due(10 * S);
    assertEquals(1, change.get(0).alerts().size(), "a change sends only what changed");
    assertEquals("c", change.get(0).alerts().get(0).labels().get("host"));
    g.offer(alert("X", "a", Alert.State.RESOLVED), 20 * S);
    assertEquals(Alert.State.RESOLVED, g.due(20 * S).get(0).alerts().get(0).state());
    assertTrue(g.due(59 * S).isEmpty(), "changes do not reset the resend clock, nor trigger it");
    List<Grouper.Batch> resend = g.due(60 * S);
    assertEquals(2, resend.get(0).alerts().size(), "every firing alert again (b and c)");
    assertTrue(g.due(119 * S).isEmpty());
    assertEquals(1, g.due(120 * S).size());
  }

  @Test
  void aBatchNotMarkedSentStaysDue() {
    Grouper g = new Grouper(List.of("alertname"), 0, 0, 3600 * S, 10, Map.of());
    g.offer(alert("X", "a", Alert.State.FIRING), 0);
    List<Grouper.Batch> first = g.pending(S);
    assertEquals(1, first.size());
    // queuing it failed (a full disk): nothing was marked, the next tick sends it
    List<Grouper.Batch> again = g.pending(2 * S);
    assertEquals(first.get(0).alerts(), again.get(0).alerts());
    g.sent(again.get(0), 2 * S);
    assertTrue(g.pending(3 * S).isEmpty());
  }
}
