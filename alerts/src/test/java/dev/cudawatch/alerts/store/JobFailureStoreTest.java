package dev.cudawatch.alerts.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.JobFailure;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The failed jobs held for the page and /api/jobs: newest first, bounded, replaced by id. */
class JobFailureStoreTest {
  private static final Instant T0 = Instant.parse("2026-11-22T03:00:00Z");

  static JobFailure failure(
      String id, String job, String root, String host, List<String> others, long from, long to) {
    return new JobFailure(
        1,
        id,
        job,
        root,
        "nccl_timeout",
        host,
        1,
        "1",
        "summary of " + root,
        others,
        others.size(),
        List.of(host, "node-9"),
        4,
        T0.plusSeconds(from),
        T0.plusSeconds(to),
        "hung_outside_collective",
        List.of("ranks 0, 2, 3 timed out waiting in ALLREDUCE #31"));
  }

  private static Incident incident(String id, String job, long at) {
    return Incident.builder(id, "nccl_timeout")
        .job(job)
        .host("node-1")
        .eventTime(T0.plusSeconds(at))
        .detectedTime(T0.plusSeconds(at))
        .build();
  }

  @Test
  void newestFirstBoundedAndCounted() {
    JobFailureStore s = new JobFailureStore(2);
    assertTrue(s.add(failure("j1/a", "j1", "a", "node-1", List.of(), 0, 10)));
    assertTrue(s.add(failure("j2/b", "j2", "b", "node-2", List.of(), 0, 10)));
    assertTrue(s.add(failure("j3/c", "j3", "c", "node-3", List.of(), 0, 10)));
    assertEquals(2, s.size());
    assertEquals(1, s.evicted());
    assertEquals(
        List.of("j3", "j2"),
        s.query(null, null, 0, 10).items().stream().map(f -> f.job()).toList());
    assertTrue(s.latest("j1").isEmpty(), "the oldest left first");
    assertThrows(IllegalArgumentException.class, () -> new JobFailureStore(0));
  }

  @Test
  void aRecordWithAKnownIdReplacesTheOlderOneAndIsNewest() {
    JobFailureStore s = new JobFailureStore(10);
    s.add(failure("j1/a", "j1", "a", "node-1", List.of(), 0, 10));
    s.add(failure("j2/b", "j2", "b", "node-2", List.of(), 0, 10));
    assertFalse(s.add(failure("j1/a", "j1", "a", "node-1", List.of("c1", "c2"), 0, 20)));
    assertEquals(2, s.size());
    assertEquals(1, s.replaced());
    JobFailureStore.Page p = s.query(null, null, 0, 10);
    assertEquals(2, p.total());
    assertEquals("j1", p.items().get(0).job());
    assertEquals(2, p.items().get(0).consequenceCount(), "the newer record's content");
  }

  @Test
  void filtersByJobAndAnyOfItsHostsAndPages() {
    JobFailureStore s = new JobFailureStore(10);
    s.add(failure("j1/a", "j1", "a", "node-1", List.of(), 0, 10));
    s.add(failure("j1/b", "j1", "b", "node-2", List.of(), 100, 110));
    s.add(failure("j2/c", "j2", "c", "node-3", List.of(), 0, 10));
    assertEquals(2, s.query("j1", null, 0, 10).total());
    assertEquals("j1/b", s.latest("j1").orElseThrow().id());
    assertEquals(1, s.query(null, "node-2", 0, 10).total(), "the culprit's host");
    assertEquals(3, s.query(null, "node-9", 0, 10).total(), "any host of the job");
    assertEquals(0, s.query("j2", "node-1", 0, 10).total());
    JobFailureStore.Page second = s.query(null, null, 1, 1);
    assertEquals(3, second.total());
    assertEquals(List.of("j1/b"), second.items().stream().map(JobFailure::id).toList());
    assertTrue(s.query(null, null, 5, 10).items().isEmpty());
  }

  @Test
  void anIncidentFindsItsFailureByIdElseByTime() {
    JobFailureStore s = new JobFailureStore(10);
    s.add(failure("j1/a", "j1", "a", "node-1", List.of("c"), 0, 10));
    s.add(failure("j1/b", "j1", "b", "node-1", List.of(), 100, 110));
    assertEquals("j1/a", s.forIncident(incident("a", "j1", 5)).orElseThrow().id(), "the root");
    assertEquals("j1/a", s.forIncident(incident("c", "j1", 105)).orElseThrow().id(), "listed");
    // not listed (the list is capped): the failure whose span holds it
    assertEquals("j1/b", s.forIncident(incident("d", "j1", 104)).orElseThrow().id());
    assertEquals("j1/a", s.forIncident(incident("e", "j1", 10)).orElseThrow().id());
    assertTrue(s.forIncident(incident("f", "j1", 50)).isEmpty(), "between the two failures");
    assertTrue(s.forIncident(incident("a", "j2", 5)).isEmpty(), "another job");
    assertTrue(s.forIncident(incident("a", null, 5)).isEmpty(), "no job");
  }
}
