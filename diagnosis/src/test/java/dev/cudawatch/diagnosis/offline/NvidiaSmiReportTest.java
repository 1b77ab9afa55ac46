package dev.cudawatch.diagnosis.offline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.diagnosis.catalog.Catalog;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * nvidia-smi -q health sections, on a real H100 report (golden/nvsmi_healthy_h100.log, all zeros)
 * with its counters changed in place, so every case keeps the real layout around them.
 */
class NvidiaSmiReportTest {
  private static final OfflineClassifier CLASSIFIER =
      new OfflineClassifier(
          Catalog.builtIn(), Clock.fixed(Instant.parse("2026-01-01T00:00:00Z"), ZoneOffset.UTC));
  private static String h100;

  @BeforeAll
  static void load() throws IOException {
    h100 = Files.readString(Path.of("src/test/resources/golden/nvsmi_healthy_h100.log"));
  }

  private static List<Incident> classify(String report) throws IOException {
    return CLASSIFIER.classify(
        new ByteArrayInputStream(report.getBytes(StandardCharsets.UTF_8)), "q.txt", null);
  }

  /** The report with the n-th (0-based) line holding {@code key} set to {@code value}. */
  private static String with(String report, String key, int nth, String value) {
    String[] lines = report.split("\n", -1);
    int seen = 0;
    for (int i = 0; i < lines.length; i++) {
      if (lines[i].strip().startsWith(key + " ") && seen++ == nth) {
        lines[i] = lines[i].substring(0, lines[i].indexOf(": ") + 2) + value;
        return String.join("\n", lines);
      }
    }
    throw new AssertionError("no " + key + " #" + nth);
  }

  @Test
  void aHealthyGpuMakesNothing() throws IOException {
    assertEquals(List.of(), classify(h100));
  }

  @Test
  void uncorrectableErrorsAreCriticalAndToldApartByScope() throws IOException {
    // Volatile comes first, then Aggregate: the same line means another counter in each
    String r = with(with(h100, "DRAM Uncorrectable", 0, "2"), "DRAM Uncorrectable", 1, "3");
    r = with(r, "SRAM Uncorrectable SEC-DED", 1, "1");
    List<Incident> out = classify(r);
    assertEquals(1, out.size(), out.toString());
    Incident i = out.get(0);
    assertEquals("ecc_error", i.incidentClass());
    assertEquals("critical", i.severity());
    assertEquals("0000:00:06", i.fields().get("pci"));
    assertEquals(2L, ((Number) i.fields().get("ecc_volatile_uncorrectable")).longValue());
    assertEquals(4L, ((Number) i.fields().get("ecc_aggregate_uncorrectable")).longValue());
    assertEquals(0L, ((Number) i.fields().get("ecc_aggregate_correctable")).longValue());
    assertEquals(
        "GPU at 0000:00:06: 2 uncorrectable ECC errors since the driver loaded, 4 in its lifetime",
        i.summary());
  }

  @Test
  void correctedErrorsAloneAreAWarning() throws IOException {
    List<Incident> out = classify(with(h100, "SRAM Correctable", 1, "5"));
    assertEquals(1, out.size(), out.toString());
    assertEquals("warning", out.get(0).severity());
    assertEquals(5L, ((Number) out.get(0).fields().get("ecc_aggregate_correctable")).longValue());
    assertEquals(0L, ((Number) out.get(0).fields().get("ecc_volatile_correctable")).longValue());
  }

  @Test
  void aPendingRemapIsAnErrorAndAFailedOneCritical() throws IOException {
    // "Pending" is also a key under MIG Mode, ECC Mode...: only the one under Remapped Rows counts
    String pending =
        h100.replace(
            "        Pending                                        : No\n        Remapping",
            "        Pending                                        : Yes\n        Remapping");
    Incident p = classify(pending).get(0);
    assertEquals("error", p.severity());
    assertEquals(Boolean.TRUE, p.fields().get("row_remap_pending"));
    assertFalse(p.nextSteps().isEmpty());
    Incident f = classify(with(h100, "Remapping Failure Occurred", 0, "Yes")).get(0);
    assertEquals("critical", f.severity());
    assertEquals(Boolean.TRUE, f.fields().get("row_remap_failure"));
    assertEquals(Boolean.FALSE, f.fields().get("row_remap_pending"));
  }

  @Test
  void eachGpuIsItsOwnAndTheOldLayoutIsRead() throws IOException {
    // before Ampere: Single Bit / Double Bit with a Total each, and Pending Page Blacklist
    String old =
        """
        GPU 00000000:84:00.0
            Product Name                    : Tesla K40c
            ECC Errors
                Volatile
                    Single Bit
                        Device Memory       : 4
                        Total               : 4
                    Double Bit
                        Device Memory       : 1
                        Total               : 1
                Aggregate
                    Single Bit
                        Device Memory       : 9
                        Total               : 9
                    Double Bit
                        Device Memory       : 1
                        Total               : 1
            Retired Pages
                Single Bit ECC              : 0
                Double Bit ECC              : 1
                Pending Page Blacklist      : Yes
        """;
    // the healthy H100 first, then the failing K40c in the same report
    List<Incident> out = classify(h100 + old);
    assertEquals(1, out.size(), out.toString());
    Incident i = out.get(0);
    assertEquals("0000:84:00", i.fields().get("pci"));
    assertEquals("critical", i.severity());
    assertEquals(1L, ((Number) i.fields().get("ecc_volatile_uncorrectable")).longValue());
    assertEquals(9L, ((Number) i.fields().get("ecc_aggregate_correctable")).longValue());
    assertEquals(1L, ((Number) i.fields().get("retired_pages_dbe")).longValue());
    assertEquals(Boolean.TRUE, i.fields().get("retired_pages_pending"));
  }
}
