package dev.cudawatch.common.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * nvidia-smi timestamps are the node's local time without a zone: the same sampler recorded on a
 * real H100 node under TZ=America/New_York and under UTC must give the same instants.
 */
class NvidiaSmiCsvTest {
  private static final ZoneId NEW_YORK = ZoneId.of("America/New_York");

  private static List<String> rows(String name) throws IOException {
    try (InputStream in = NvidiaSmiCsvTest.class.getResourceAsStream("/nvidia-smi/" + name)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().toList();
    }
  }

  @Test
  void localTimesAreReadInTheNodesZone() throws IOException {
    NvidiaSmiCsv ny = NvidiaSmiCsv.agentFormat(NEW_YORK);
    MemorySample first = ny.parse(rows("sampler-newyork.csv").get(0)).orElseThrow();
    // printed 09:58:50.279 in New York (UTC-5 in November): 14:58:50.279 UTC
    assertEquals(
        Instant.parse("2026-11-22T14:58:50.279Z"), Instant.ofEpochMilli(first.epochMillis()));
    assertEquals(23055L << 20, first.usedBytes());

    NvidiaSmiCsv utc = NvidiaSmiCsv.agentFormat(ZoneOffset.UTC);
    long utcFirst = utc.parse(rows("sampler-utc.csv").get(0)).orElseThrow().epochMillis();
    long utcLast = utc.parse(rows("sampler-utc.csv").get(5)).orElseThrow().epochMillis();
    // the New York run started seconds after the UTC one ended, not five hours before it
    long gap = first.epochMillis() - utcLast;
    assertTrue(gap >= 0 && gap < 60_000, "seconds apart, was " + gap + " ms");
    assertTrue(utcFirst < first.epochMillis());
  }

  @Test
  void agentRowsCarryTheirOffsetWhateverTheReadersZone() throws IOException {
    MemorySample s =
        NvidiaSmiCsv.agentFormat(NEW_YORK).parse(rows("sampler-newyork.csv").get(0)).orElseThrow();
    String row = NvidiaSmiCsv.toAgentRow(s);
    assertTrue(row.startsWith("2026/11/22 14:58:50.279Z, 0, "), row);
    // read back anywhere (the processor, a reader in Kolkata): the same instant
    for (ZoneId z : List.of(ZoneOffset.UTC, ZoneId.of("Asia/Kolkata"), NEW_YORK)) {
      assertEquals(
          s.epochMillis(), NvidiaSmiCsv.agentFormat(z).parse(row).orElseThrow().epochMillis());
    }
    assertEquals(
        s.epochMillis(), NvidiaSmiCsv.agentFormat().parse(row).orElseThrow().epochMillis());
  }

  @Test
  void aHeaderedFileIsReadInTheZoneItWasWrittenIn() {
    NvidiaSmiCsv csv =
        NvidiaSmiCsv.fromHeader("timestamp, index, memory.used [MiB], memory.total [MiB]", NEW_YORK)
            .orElseThrow();
    assertEquals(
        Instant.parse("2026-07-01T13:00:00Z").toEpochMilli(), // summer: UTC-4
        csv.parse("2026/07/01 09:00:00.000, 0, 100 MiB, 81559 MiB").orElseThrow().epochMillis());
  }
}
