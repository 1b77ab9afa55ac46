package dev.cudawatch.diagnosis.trend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.gpu.MemorySample;
import dev.cudawatch.common.gpu.NvidiaSmiCsv;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class MemoryTrendDetectorTest {
  private static final long GIB = 1L << 30;

  @Test
  void theRealLeakIsFlaggedWellBeforeTheCardIsFull() throws Exception {
    Path csv =
        Path.of(
            System.getProperty("golden.dir", "src/test/resources/golden"),
            "nvidia_smi_during_leak.csv");
    List<String> rows = Files.readAllLines(csv);
    NvidiaSmiCsv parser =
        NvidiaSmiCsv.fromHeader(rows.get(0), java.time.ZoneOffset.UTC).orElseThrow();
    MemoryTrendDetector d = new MemoryTrendDetector(TrendSettings.defaults());
    Optional<MemoryTrend> first = Optional.empty();
    long fullAt = Long.MAX_VALUE;
    for (String row : rows.subList(1, rows.size())) {
      MemorySample s = parser.parse(row).orElseThrow();
      if (first.isEmpty()) {
        first = d.add(s);
      }
      if (s.usedBytes() >= s.totalBytes() * 99 / 100) {
        fullAt = Math.min(fullAt, s.epochMillis());
      }
    }
    MemoryTrend t = first.orElseThrow();
    assertTrue(t.at().usedBytes() < t.at().totalBytes() / 2, "flagged before half full: " + t);
    assertTrue(fullAt - t.at().epochMillis() > 30_000, "at least 30 s of warning");
    assertTrue(t.predictedSecondsToFull() > 0);
  }

  @Test
  void aModelLoadingThenFlatIsNoLeak() {
    MemoryTrendDetector d = new MemoryTrendDetector(TrendSettings.defaults());
    for (int i = 0; i < 600; i++) {
      long used = i < 10 ? i * 7 * GIB : 70 * GIB + (i % 3) * (1L << 20);
      assertTrue(
          d.add(new MemorySample(i * 500L, 0, null, used, 80 * GIB)).isEmpty(), "sample " + i);
    }
  }

  @Test
  void aSlowGrowthFarFromFullIsNoAlarmYet() {
    MemoryTrendDetector d = new MemoryTrendDetector(TrendSettings.defaults());
    for (int i = 0; i < 200; i++) {
      long used = 10 * GIB + i * (2L << 20); // 2 MiB/s, 70 GiB free: hours away
      assertTrue(d.add(new MemorySample(i * 1000L, 0, null, used, 80 * GIB)).isEmpty());
    }
  }

  @Test
  void stateStaysBounded() {
    MemoryTrendDetector d = new MemoryTrendDetector(TrendSettings.defaults());
    for (int i = 0; i < 10_000; i++) {
      d.add(new MemorySample(i * 1000L, 0, null, GIB, 80 * GIB));
    }
    assertTrue(d.size() <= TrendSettings.defaults().windowSamples());
  }

  @Test
  void aDetectorResumedFromItsSamplesDecidesAsTheOneThatSawThem() throws Exception {
    List<String> rows =
        Files.readAllLines(
            Path.of(
                System.getProperty("golden.dir", "src/test/resources/golden"),
                "nvidia_smi_during_leak.csv"));
    NvidiaSmiCsv parser =
        NvidiaSmiCsv.fromHeader(rows.get(0), java.time.ZoneOffset.UTC).orElseThrow();
    MemoryTrendDetector live = new MemoryTrendDetector(TrendSettings.defaults());
    MemoryTrendDetector resumed = new MemoryTrendDetector(TrendSettings.defaults());
    int flagged = 0;
    for (String row : rows.subList(1, rows.size())) {
      MemorySample s = parser.parse(row).orElseThrow();
      // as a stream job keeps it: only the samples are state, the detector is rebuilt each time
      resumed = MemoryTrendDetector.resume(TrendSettings.defaults(), resumed.samples());
      Optional<MemoryTrend> a = live.add(s);
      Optional<MemoryTrend> b = resumed.add(s);
      assertEquals(a, b, "sample at " + s.epochMillis());
      flagged += a.isPresent() ? 1 : 0;
    }
    assertTrue(flagged > 0, "the leak was flagged");
    assertEquals(live.samples(), resumed.samples());
  }
}
