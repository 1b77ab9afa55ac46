package dev.cudawatch.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.ingest.streams.GpuMemorySampler;
import dev.cudawatch.ingest.streams.KernelLogSource;
import dev.cudawatch.ingest.streams.KernelLogSourceAccess;
import dev.cudawatch.ingest.streams.PciMap;
import dev.cudawatch.testkit.Await;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

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
            Clock.fixed(Instant.EPOCH, ZoneOffset.UTC));
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

  @Test
  void rankPrefixesBecomeRankMetadata() {
    assertEquals(3, Agent.rankPrefix("[rank3]: Traceback (most recent call last):"));
    assertNull(Agent.rankPrefix("[rankless]"));
  }
}
