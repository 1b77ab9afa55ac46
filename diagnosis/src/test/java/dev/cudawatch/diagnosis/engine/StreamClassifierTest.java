package dev.cudawatch.diagnosis.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.diagnosis.advice.Advisor;
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
          c.accept(
              "NVRM: Xid (PCI:0000:3b:00): " + (i + 1) + ", pid=1, name=python",
              kernelMeta(i),
              T0));
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

  private static final String XID_79 =
      "NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, name=python, GPU has fallen off the bus.";

  @Test
  void aKernelLineInAJobsOutputIsAQuoteThatStartsNoEpisode() {
    StreamClassifier c = classifier();
    c.accept(XID_79, meta(1), T0);
    c.accept("RuntimeError: CUDA error: an illegal memory access was encountered", meta(2), T0);
    List<Incident> out = c.flush(T0);
    assertEquals(2, out.size(), out.toString());
    Incident quote = out.get(0);
    assertEquals("kernel_line_quoted", quote.incidentClass());
    assertEquals("info", quote.severity());
    assertEquals("gpu_xid", quote.fields().get(StreamClassifier.QUOTED_CLASS));
    assertTrue(quote.summary().startsWith("A kernel line quoted in a job's output: GPU at"));
    assertTrue(quote.root());
    Incident failure = out.get(1);
    assertEquals("illegal_memory_access", failure.incidentClass());
    assertTrue(failure.root(), "the job's own failure is no consequence of a quote");
  }

  @Test
  void theSameLineFromTheKernelIsTheKernelsWord() {
    StreamClassifier c = classifier();
    c.accept(XID_79, kernelMeta(1), T0);
    Incident inc = c.flush(T0).get(0);
    assertEquals("gpu_xid", inc.incidentClass());
    assertEquals("critical", inc.severity());
    assertEquals(79L, inc.fields().get("xid"));
    assertFalse(inc.fields().containsKey(StreamClassifier.QUOTED_CLASS));
  }

  @Test
  void everyKernelClassIsQuotedFromAJobAndStandsOffline() {
    for (String line :
        List.of(
            XID_79,
            "NVRM: GPU at PCI:0000:3b:00: GPU-1234 has fallen off the bus.",
            "NVRM: Xid (PCI:0000:3b:00): 48, pid=1, name=python, An uncorrectable double bit error")) {
      StreamClassifier job = classifier();
      job.accept(line, meta(1), T0);
      for (Incident i : job.flush(T0)) {
        assertEquals("kernel_line_quoted", i.incidentClass(), line);
        assertFalse(CATALOG.taxonomy().kernelLogClasses().contains(i.incidentClass()), line);
      }
      StreamClassifier offline = classifier();
      offline.accept(line, null, T0);
      assertTrue(
          offline.flush(T0).stream()
              .allMatch(i -> CATALOG.taxonomy().kernelLogClasses().contains(i.incidentClass())),
          "a file a person classifies keeps its kernel lines: " + line);
    }
  }

  private static LineMeta meta(int n) {
    return new LineMeta("r" + n, T0, null, null);
  }

  private static LineMeta kernelMeta(int n) {
    return new LineMeta("k" + n, T0, null, null, null, null, null, true);
  }
}
