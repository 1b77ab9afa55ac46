package dev.cudawatch.processor.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.diagnosis.advice.Advisor;
import dev.cudawatch.diagnosis.catalog.Catalog;
import dev.cudawatch.diagnosis.catalog.CatalogLoader;
import dev.cudawatch.diagnosis.engine.ClassifierSettings;
import dev.cudawatch.diagnosis.engine.LineMeta;
import dev.cudawatch.diagnosis.engine.StreamClassifier;
import dev.cudawatch.diagnosis.engine.StreamContext;
import dev.cudawatch.diagnosis.engine.StreamState;
import dev.cudawatch.diagnosis.taxonomy.IncidentClass;
import dev.cudawatch.diagnosis.taxonomy.Taxonomy;
import dev.cudawatch.processor.records.IncidentCodec;
import dev.cudawatch.processor.records.KryoFree;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.operators.co.KeyedCoProcessOperator;
import org.apache.flink.streaming.util.KeyedTwoInputStreamOperatorTestHarness;
import org.apache.flink.util.Collector;
import org.junit.jupiter.api.Test;

/** The field trial's Xid 31 (real kernel line, pid 819) belongs to the job that held GPU 0. */
class AttributeKernelIncidentsTest {
  private static final Catalog CATALOG = new CatalogLoader().loadTexts(Map.of());
  private static final Instant T0 = Instant.parse("2026-11-22T15:27:04Z");
  private static final String XID =
      "NVRM: Xid (PCI:0000:00:06): 31, pid=819, name=python3, channel 0x0000000a, intr 00000000."
          + " MMU Fault: ENGINE GRAPHICS GPC1 GPCCLIENT_T1_8 faulted @ 0x7f53_cfe40000. Fault is of"
          + " type FAULT_PDE ACCESS_TYPE_VIRT_WRITE";

  private static Incident xid(Instant at) {
    StreamClassifier c =
        new StreamClassifier(
            CATALOG,
            new Advisor(CATALOG.taxonomy()),
            new StreamContext("h100-node", null, "/dev/kmsg"),
            ClassifierSettings.defaults(),
            new StreamState());
    List<Incident> out =
        new ArrayList<>(
            c.accept(
                XID, new LineMeta("k@1", at, null, null, 0, null, Map.of("gpu", "PCI"), true), at));
    out.addAll(c.flush(at));
    return out.get(0);
  }

  private static List<GpuHolder> holders(LogRecord r) {
    List<GpuHolder> out = new ArrayList<>();
    GpuHolderSignals s = new GpuHolderSignals(1000);
    s.open(null);
    s.flatMap(
        r,
        new Collector<>() {
          @Override
          public void collect(GpuHolder h) {
            out.add(h);
          }

          @Override
          public void close() {}
        });
    return out;
  }

  private static LogRecord line(String job, Instant at, RecordKind kind, String pid) {
    return LogRecord.builder()
        .host("h100-node")
        .job(job)
        .gpu(0)
        .kind(kind)
        .source("run:" + job + "/stderr")
        .sourceId(job)
        .offset(1)
        .eventTime(at)
        .text("step")
        .attribution(Map.of("gpu", "CUDA_VISIBLE_DEVICES", "pid", pid))
        .build();
  }

  @Test
  void aQuietMarkerSaysNothingOfWhoHoldsAGpu() {
    assertTrue(holders(line("leak-1", T0, RecordKind.QUIET, "700")).isEmpty());
    assertEquals(1, holders(line("leak-1", T0, RecordKind.LOG, "700")).size());
  }

  @Test
  void theXidGoesToTheJobOnItsGpuThenOrToItsPid() throws Exception {
    try (var h =
        new KeyedTwoInputStreamOperatorTestHarness<String, GpuHolder, Incident, Incident>(
            new KeyedCoProcessOperator<>(new AttributeKernelIncidents()),
            AttributeKernelIncidents::keyOf,
            AttributeKernelIncidents::keyOf,
            Types.STRING)) {
      h.open();
      // leak-1 ran on GPU 0 and exited at t = 52 s; ima-1 started after it
      for (GpuHolder g : holders(line("leak-1", T0.plusSeconds(2), RecordKind.LOG, "700"))) {
        h.processElement1(g, 0);
      }
      for (GpuHolder g : holders(line("leak-1", T0.plusSeconds(52), RecordKind.EXIT, "700"))) {
        h.processElement1(g, 0);
      }
      for (GpuHolder g : holders(line("ima-1", T0.plusSeconds(56), RecordKind.LOG, "900"))) {
        h.processElement1(g, 0);
      }
      Incident x = xid(T0.plusSeconds(57));
      assertTrue(AttributeKernelIncidents.wanted(x));
      h.processElement2(x, 0);
      Incident got = h.extractOutputValues().get(0);
      assertEquals("ima-1", got.job());
      assertTrue(
          ((Map<?, ?>) got.fields().get("attribution")).get("job").toString().contains("GPU 0"));

      // the line's own pid wins over the GPU's latest user
      for (GpuHolder g : holders(line("pid-owner", T0.plusSeconds(50), RecordKind.LOG, "819"))) {
        h.processElement1(g, 0);
      }
      h.processElement2(xid(T0.plusSeconds(58)), 0);
      assertEquals("pid-owner", h.extractOutputValues().get(1).job());

      // long after everyone left, an Xid is nobody's
      h.processElement2(xid(T0.plusSeconds(3600)), 0);
      assertNull(h.extractOutputValues().get(2).job());
    }
  }

  private static KeyedTwoInputStreamOperatorTestHarness<String, GpuHolder, Incident, Incident>
      kryoFree() throws Exception {
    return KryoFree.harness(
        new KeyedTwoInputStreamOperatorTestHarness<>(
            new KeyedCoProcessOperator<>(new AttributeKernelIncidents()),
            AttributeKernelIncidents::keyOf,
            AttributeKernelIncidents::keyOf,
            Types.STRING),
        IncidentCodec.TYPE.serializer());
  }

  @Test
  void theHoldersSurviveARestoreWithoutKryoAndLeaveWithTheirTtl() throws Exception {
    OperatorSubtaskState kept;
    try (var h = kryoFree()) {
      h.open();
      h.setStateTtlProcessingTime(0);
      for (GpuHolder g : holders(line("ima-1", T0.plusSeconds(56), RecordKind.LOG, "900"))) {
        h.processElement1(g, 0);
      }
      kept = h.snapshot(1, 1);
    }
    OperatorSubtaskState later;
    try (var h = kryoFree()) {
      h.initializeState(kept);
      h.open();
      h.processElement2(xid(T0.plusSeconds(57)), 0);
      assertEquals("ima-1", h.extractOutputValues().get(0).job(), "the restored holder");
      h.setStateTtlProcessingTime(java.time.Duration.ofHours(24).toMillis() + 1);
      later = h.snapshot(2, 2);
    }
    try (var h = kryoFree()) {
      h.initializeState(later);
      h.open();
      assertEquals(0, h.numKeyedStateEntries(), "a host quiet for a day leaves no state");
      assertEquals(0, h.numEventTimeTimers() + h.numProcessingTimeTimers(), "and no timers");
    }
  }

  @Test
  void whichClassesComeFromTheKernelLogIsTheTaxonomys() {
    for (IncidentClass c : Taxonomy.builtIn().classes()) {
      Incident i = Incident.builder("i-" + c.id(), c.id()).host("h").eventTime(T0).build();
      assertEquals(c.kernelLog(), AttributeKernelIncidents.wanted(i), c.id());
    }
  }
}
