package dev.cudawatch.processor.functions;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.diagnosis.trend.TrendSettings;
import java.time.Duration;
import java.util.List;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;
import org.junit.jupiter.api.Test;

class DetectMemoryTrendTest {
  @Test
  void warnsOnceWhileMemoryClimbsToFull() throws Exception {
    try (KeyedOneInputStreamOperatorTestHarness<String, LogRecord, Incident> h =
        ProcessFunctionTestHarnesses.forKeyedProcessFunction(
            new DetectMemoryTrend(
                TrendSettings.defaults(), Duration.ofMinutes(10), Duration.ofHours(1)),
            DetectMemoryTrend::keyOf,
            Types.STRING)) {
      h.open();
      for (int i = 0; i < 120; i++) {
        long used = Math.min(80 * 1024, 1024L * i); // MiB: +2 GiB/s at one sample per 500 ms
        String ts =
            String.format("2026/11/22 03:%02d:%02d.%03d", i / 120, (i / 2) % 60, (i % 2) * 500);
        h.processElement(Records.memory(i, ts + ", 0, 00000000:3B:00.0, " + used + ", 81920"), i);
      }
      List<Incident> out = h.extractOutputValues();
      assertEquals(1, out.size(), "one warning, not one per sample");
      Incident i = out.get(0);
      assertEquals("memory_leak", i.incidentClass());
      assertEquals(0L, i.fields().get("gpu"));
      assertEquals("0000:3b:00", i.fields().get("pci"));
      assertTrue((Long) i.fields().get("predicted_seconds_to_full") > 0);
    }
  }
}
