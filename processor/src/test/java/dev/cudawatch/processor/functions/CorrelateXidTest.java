package dev.cudawatch.processor.functions;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.diagnosis.taxonomy.Taxonomy;
import dev.cudawatch.diagnosis.taxonomy.XidInfo;
import dev.cudawatch.processor.records.IncidentCodec;
import dev.cudawatch.processor.records.KryoFree;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;

class CorrelateXidTest {
  private static Incident incident(String id, String cls, Map<String, Object> fields, long t) {
    return Records.incident(id, cls, "node-3", fields, t);
  }

  private static KeyedOneInputStreamOperatorTestHarness<String, Incident, Incident> harness()
      throws Exception {
    var h =
        KryoFree.harness(
            new KeyedOneInputStreamOperatorTestHarness<>(
                new KeyedProcessOperator<>(new CorrelateXid(10_000)),
                CorrelateXid::keyOf,
                Types.STRING),
            IncidentCodec.TYPE.serializer());
    h.open();
    return h;
  }

  @Test
  void anIllegalAccessBesideXid31IsAnApplicationFault() throws Exception {
    try (var h = harness()) {
      Incident app = incident("a", "illegal_memory_access", Map.of("gpu", 0L), 100_000);
      h.processElement(app, 100_000);
      assertTrue(h.extractOutputValues().isEmpty(), "waits for the kernel log");
      h.processElement(incident("x", "gpu_xid", Map.of("gpu", 0L, "xid", 31L), 99_000), 99_000);
      List<Incident> out = h.extractOutputValues();
      assertEquals(1, out.size());
      assertEquals("a", out.get(0).id(), "the same incident, now with a verdict");
      assertEquals(CorrelateXid.APPLICATION_FAULT, out.get(0).verdict());
      h.processWatermark(new Watermark(200_000));
      assertEquals(0, h.numEventTimeTimers());
      assertEquals(0, h.numKeyedStateEntries());
    }
  }

  @Test
  void withoutGpuAttributionTheHostStandsForItsGpus() throws Exception {
    // a log shipper's records: neither side knows its GPU index
    try (var h = harness()) {
      h.processElement(incident("x", "gpu_xid", Map.of("xid", 13L), 99_000), 99_000);
      h.processElement(incident("a", "illegal_memory_access", Map.of(), 100_000), 100_000);
      h.processElement(incident("b", "illegal_memory_access", Map.of("gpu", 1L), 100_000), 100_000);
      List<Incident> out = h.extractOutputValues();
      assertEquals(1, out.size(), "a GPU-attributed incident is not judged by a host-wide Xid");
      assertEquals("a", out.get(0).id());
      assertEquals(CorrelateXid.APPLICATION_FAULT, out.get(0).verdict());
    }
  }

  @Test
  void aHardwareXidMakesTheGpuTheSuspect() throws Exception {
    try (var h = harness()) {
      h.processElement(incident("x", "gpu_xid", Map.of("gpu", 0L, "xid", 79L), 50_000), 50_000);
      h.processElement(incident("b", "kernel_exception", Map.of("gpu", 0L), 52_000), 52_000);
      assertEquals(CorrelateXid.HARDWARE_SUSPECT, h.extractOutputValues().get(0).verdict());
    }
  }

  @Test
  void withoutAnXidNearbyThereIsNoVerdictAndNothingStays() throws Exception {
    try (var h = harness()) {
      h.processElement(incident("x", "gpu_xid", Map.of("gpu", 0L, "xid", 31L), 10_000), 10_000);
      h.processElement(incident("c", "illegal_memory_access", Map.of("gpu", 0L), 90_000), 90_000);
      h.processWatermark(new Watermark(500_000));
      assertTrue(h.extractOutputValues().isEmpty());
      assertEquals(0, h.numEventTimeTimers());
      assertEquals(0, h.numKeyedStateEntries());
    }
  }

  @Test
  void everyXidOfTheCatalogGivesTheVerdictTaxonomyYamlStates() throws Exception {
    for (XidInfo x : Taxonomy.builtIn().xids()) {
      try (var h = harness()) {
        h.processElement(
            incident("x", "gpu_xid", Map.of("gpu", 0L, "xid", (long) x.xid()), 50_000), 50_000);
        h.processElement(incident("b", "kernel_exception", Map.of("gpu", 0L), 51_000), 51_000);
        String expected =
            switch (x.verdict()) {
              case APPLICATION -> CorrelateXid.APPLICATION_FAULT;
              case HARDWARE -> CorrelateXid.HARDWARE_SUSPECT;
              case DRIVER -> CorrelateXid.DRIVER_SUSPECT;
              case INFORMATIONAL -> null;
            };
        List<Incident> out = h.extractOutputValues();
        assertEquals(expected, out.isEmpty() ? null : out.get(0).verdict(), "Xid " + x.xid());
      }
    }
  }

  @Test
  void theHardwareOutweighsTheApplicationBesideIt() throws Exception {
    try (var h = harness()) {
      h.processElement(incident("x", "gpu_xid", Map.of("gpu", 0L, "xid", 13L), 50_000), 50_000);
      h.processElement(incident("y", "gpu_xid", Map.of("gpu", 0L, "xid", 95L), 50_500), 50_500);
      h.processElement(incident("b", "illegal_memory_access", Map.of("gpu", 0L), 51_000), 51_000);
      assertEquals(CorrelateXid.HARDWARE_SUSPECT, h.extractOutputValues().get(0).verdict());
    }
  }

  @Test
  void aGspTimeoutBlamesTheDriverAsTheCatalogSays() throws Exception {
    try (var h = harness()) {
      h.processElement(incident("x", "gpu_xid", Map.of("gpu", 0L, "xid", 119L), 50_000), 50_000);
      h.processElement(incident("b", "cuda_error", Map.of("gpu", 0L), 51_000), 51_000);
      assertEquals(CorrelateXid.DRIVER_SUSPECT, h.extractOutputValues().get(0).verdict());
    }
  }
}
