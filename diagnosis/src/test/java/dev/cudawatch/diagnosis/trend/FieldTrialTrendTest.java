package dev.cudawatch.diagnosis.trend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.gpu.MemorySample;
import dev.cudawatch.common.gpu.NvidiaSmiCsv;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The field trial on a real H100 ({@code src/test/resources/field-h100/}): a 40 GiB allocation
 * after a flat start, then a steady leak of about 995 MiB/s until the card (81,559 MiB) is full,
 * about 51 s after the first sample. The warning's growth and time to full are within 25 % of that;
 * the OOM's memory before it is a steady leak.
 */
class FieldTrialTrendTest {
  private static final double TRUE_GROWTH = 995.0 * (1 << 20);
  private static final long MIB = 1 << 20;

  private static List<MemorySample> samples() throws Exception {
    NvidiaSmiCsv csv = NvidiaSmiCsv.agentFormat();
    List<MemorySample> out = new ArrayList<>();
    for (String row :
        Files.readAllLines(Path.of("src/test/resources/field-h100/nvidia-smi-samples.csv"))) {
      if (!row.startsWith("#")) {
        out.add(csv.parse(row).orElseThrow(() -> new AssertionError("unparsed: " + row)));
      }
    }
    return out;
  }

  @Test
  void theLeakWarningMeasuresTheRampNotTheFlatHistory() throws Exception {
    List<MemorySample> xs = samples();
    long t0 = xs.get(0).epochMillis();
    long fullAt = t0 + 51_000;
    MemoryTrendDetector d = new MemoryTrendDetector(TrendSettings.defaults());
    Optional<MemoryTrend> first = Optional.empty();
    for (MemorySample s : xs) {
      Optional<MemoryTrend> t = d.add(s);
      if (first.isEmpty() && t.isPresent()) {
        first = t;
      }
    }
    MemoryTrend t = first.orElseThrow(() -> new AssertionError("no leak warning"));
    double growth = t.growthBytesPerSecond();
    assertTrue(
        Math.abs(growth - TRUE_GROWTH) <= 0.25 * TRUE_GROWTH,
        "growth " + growth / MIB + " MiB/s, truth 995");
    double trueLeft = (fullAt - t.at().epochMillis()) / 1000.0;
    assertTrue(
        Math.abs(t.predictedSecondsToFull() - trueLeft) <= 0.25 * trueLeft,
        "time to full " + t.predictedSecondsToFull() + " s, truth " + trueLeft + " s");
    assertTrue(trueLeft > 20, "still a useful warning: " + trueLeft + " s before the OOM");
  }

  @Test
  void theOomFollowedASteadyLeak() throws Exception {
    theOomFollowedASteadyLeak(51_000);
  }

  @Test
  void anOomLineReadAfterTheCardWasFreedStillSeesTheLeak() throws Exception {
    theOomFollowedASteadyLeak(54_000); // read 3 s late: the samples show the card freed by then
  }

  private void theOomFollowedASteadyLeak(long at) throws Exception {
    List<MemorySample> xs = samples();
    MemoryTrendDetector d = new MemoryTrendDetector(TrendSettings.defaults());
    xs.forEach(d::add); // the samples after the OOM arrive too before the OOM's line is read
    long oom = xs.get(0).epochMillis() + at;
    OomHistory.Finding f =
        OomHistory.describe(
                d.samples(),
                oom,
                Map.of(
                    "tried_to_allocate_bytes", 128 * MIB, "reserved_unallocated_bytes", 97 * MIB),
                TrendSettings.defaults())
            .orElseThrow();
    assertEquals("steady_leak", f.memoryBefore());
    double growth = ((Number) f.fields().get("memory_growth_bytes_per_second")).doubleValue();
    assertTrue(
        Math.abs(growth - TRUE_GROWTH) <= 0.25 * TRUE_GROWTH, "growth " + growth / MIB + " MiB/s");
  }
}
