package dev.cudawatch.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.gpu.NvidiaSmiCsv;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.ingest.streams.GpuMemorySampler;
import dev.cudawatch.ingest.streams.KernelLogSource;
import dev.cudawatch.ingest.streams.KernelLogSourceAccess;
import dev.cudawatch.ingest.streams.PciMap;
import dev.cudawatch.testkit.Await;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StreamSourcesTest {
  @Test
  void kernelRecordsAreFilteredAndMappedToGpus() {
    String rec =
        "4,1234,8812345123,-;NVRM: Xid (PCI:0000:3b:00): 79, pid=0, GPU has fallen off the bus.";
    String msg = KernelLogSourceAccess.message(rec);
    assertEquals("NVRM: Xid (PCI:0000:3b:00): 79, pid=0, GPU has fallen off the bus.", msg);
    assertTrue(KernelLogSource.relevant(msg));
    assertFalse(KernelLogSource.relevant("usb 1-1: new high-speed USB device number 2"));
    assertTrue(KernelLogSource.relevant("Out of memory: Killed process 19312 (python)"));
    assertEquals(3, PciMap.gpuOf(msg, Map.of("0000:3b:00", 3)));
    assertNull(PciMap.gpuOf(msg, Map.of()));
  }

  @Test
  void withoutNvidiaSmiTheSamplerWarnsOnceAndStopsQuietly() throws Exception {
    List<LogRecord> out = new ArrayList<>();
    GpuMemorySampler s =
        new GpuMemorySampler(
            "/nonexistent/nvidia-smi",
            500,
            "h",
            out::add,
            Clock.fixed(Instant.EPOCH, ZoneOffset.UTC),
            ZoneOffset.UTC);
    Thread t = new Thread(s);
    t.start();
    Await.until("the sampler's warning", s::warned, java.time.Duration.ofSeconds(10));
    assertTrue(t.isAlive(), "the sampler (and so the agent) keeps running");
    s.stop();
    t.interrupt();
    t.join(5000);
    assertEquals(0, s.samples());
    assertTrue(s.command().contains("--format=csv,noheader,nounits"));
  }

  /**
   * A real process prints what nvidia-smi printed on an H100 node under TZ=America/New_York (local
   * time, no zone); the node's zone is injected, not taken from this JVM's default.
   */
  @Test
  void samplesAreShippedInUtcWithTheirOffsetFromANodeInNewYork(@TempDir Path dir) throws Exception {
    Path rows = dir.resolve("rows.csv");
    try (var in = getClass().getResourceAsStream("/nvidia-smi/sampler-newyork.csv")) {
      Files.write(rows, in.readAllBytes());
    }
    Path smi = dir.resolve("nvidia-smi");
    Files.writeString(smi, "#!/bin/sh\ncat '" + rows + "'\nsleep 60\n");
    smi.toFile().setExecutable(true);
    List<LogRecord> out = new java.util.concurrent.CopyOnWriteArrayList<>();
    GpuMemorySampler s =
        new GpuMemorySampler(
            smi.toString(),
            500,
            "h",
            out::add,
            Clock.fixed(Instant.parse("2026-11-22T15:00:00Z"), ZoneOffset.UTC),
            ZoneId.of("America/New_York"));
    Thread t = new Thread(s);
    t.start();
    try {
      Await.until("six samples", out::size, n -> n >= 6, Duration.ofSeconds(20));
    } finally {
      s.stop();
      t.interrupt();
      t.join(5000);
    }
    LogRecord first = out.get(0);
    // printed as 09:58:50.279 in New York: 14:58:50.279 UTC, and so read by the processor
    assertEquals(Instant.parse("2026-11-22T14:58:50.279Z"), first.eventTime());
    assertTrue(first.text().startsWith("2026/11/22 14:58:50.279Z, 0, "), first.text());
    assertEquals(
        first.eventTime().toEpochMilli(),
        NvidiaSmiCsv.agentFormat().parse(first.text()).orElseThrow().epochMillis());
    assertEquals(Instant.parse("2026-11-22T15:00:00Z"), first.ingestTime());
  }

  @Test
  void rankPrefixesBecomeRankMetadata() {
    assertEquals(
        3,
        dev.cudawatch.ingest.framing.RankPrefix.of("[rank3]: Traceback (most recent call last):"));
    assertNull(dev.cudawatch.ingest.framing.RankPrefix.of("[rankless]"));
  }
}
