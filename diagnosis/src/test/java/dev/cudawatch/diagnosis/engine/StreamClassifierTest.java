package dev.cudawatch.diagnosis.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.diagnosis.catalog.Catalog;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Streaming behaviour: when incidents settle, how state stays bounded, root and consequence. */
class StreamClassifierTest {
  private static final Catalog CATALOG = Catalog.builtIn();
  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  private static StreamClassifier classifier() {
    return new StreamClassifier(
        CATALOG,
        new Advisor(CATALOG.taxonomy()),
        new StreamContext("node-1", "job-7", "/logs/train.log"),
        ClassifierSettings.defaults(),
        new StreamState());
  }

  @Test
  void anIncidentSettlesAfterQuietLinesWithoutAFlush() {
    StreamClassifier c = classifier();
    List<Incident> out = new ArrayList<>();
    out.addAll(
        c.accept(
            "RuntimeError: CUDA error: an illegal memory access was encountered", meta(1), T0));
    assertTrue(out.isEmpty(), "still open: hint lines may follow");
    for (int i = 0; i < ClassifierSettings.defaults().settleLines() + 1; i++) {
      out.addAll(c.accept("step " + i + " loss 0.1", meta(i + 2), T0));
    }
    assertEquals(1, out.size());
    Incident inc = out.get(0);
    assertEquals("illegal_memory_access", inc.incidentClass());
    assertEquals("node-1", inc.host());
    assertEquals("job-7", inc.fields().get("job"));
    assertEquals("r1", inc.firstRecordId());
    assertTrue(c.state().isIdle());
  }

  @Test
  void laterFailuresPointAtTheRoot() {
    StreamClassifier c = classifier();
    c.accept("RuntimeError: CUDA error: an illegal memory access was encountered", meta(1), T0);
    c.accept(
        "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm`",
        meta(2),
        T0);
    List<Incident> out = c.flush(T0);
    assertEquals(2, out.size());
    assertTrue(out.get(0).root());
    assertFalse(out.get(1).root());
    assertEquals(out.get(0).id(), out.get(1).rootId());
    assertTrue(out.get(1).explanation().startsWith("A consequence"));
  }

  @Test
  void aLauncherSummaryWithoutARootIsDroppedAndCounted() {
    StreamClassifier c = classifier();
    c.accept("torch.distributed.elastic.multiprocessing.errors.ChildFailedError:", meta(1), T0);
    assertEquals(List.of(), c.flush(T0));
    assertEquals(1, c.state().droppedConsequences());
  }

  @Test
  void openIncidentsAreBounded() {
    StreamClassifier c = classifier();
    List<Incident> out = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      out.addAll(
          c.accept("NVRM: Xid (PCI:0000:3b:00): " + (i + 1) + ", pid=1, name=python", meta(i), T0));
    }
    assertTrue(c.state().open.size() <= StreamState.MAX_OPEN + 1);
    out.addAll(c.flush(T0));
    assertEquals(100, out.size(), "every distinct Xid is reported, none lost to the bound");
  }

  @Test
  void aRankPrefixBecomesTheRankField() {
    StreamClassifier c = classifier();
    c.accept("[rank5]: RuntimeError: CUDA error: misaligned address", meta(1), T0);
    Incident inc = c.flush(T0).get(0);
    assertEquals("misaligned_address", inc.incidentClass());
    assertEquals(5L, inc.fields().get("rank"));
  }

  private static LineMeta meta(int n) {
    return new LineMeta("r" + n, T0, null, null);
  }
}
