package dev.cudawatch.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.Topics;
import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.kafka.embedded.KafkaBrokerExtension;
import dev.cudawatch.testkit.Await;
import dev.cudawatch.testkit.Tmpfs;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The spool sits on a real 1 MiB tmpfs that fills while Xids are read from the kernel log: the kmsg
 * cursor never passes the Xid that could not be spooled. The agent stops while it waits for room;
 * once there is room again, a new agent reads that Xid again and every Xid reaches Kafka.
 */
class KmsgSpoolFullIT {
  private static final String BOOT = "11111111-2222-3333-4444-555555555555";
  private static final int XIDS = 1_500;

  @RegisterExtension
  static final KafkaBrokerExtension BROKER = new KafkaBrokerExtension(Topics.ALL, 2);

  @TempDir Path dir;

  @Test
  void theKmsgCursorNeverPassesAnXidThatWasNotSpooled() throws Exception {
    Path proc = dir.resolve("proc");
    KernelLogRebootIT.boot(proc, BOOT, 1_763_800_000L);
    Path state = dir.resolve("state");
    Path spoolDir = Files.createDirectories(state.resolve("spool"));
    Path kmsg = dir.resolve("kmsg");
    StringBuilder b = new StringBuilder();
    Set<String> expected = new TreeSet<>();
    for (int seq = 0; seq < XIDS; seq++) {
      String msg = "NVRM: Xid (PCI:0000:3b:00): 79, pid=" + seq + ", GPU has fallen off the bus.";
      b.append("4,").append(seq).append(",1000,-;").append(msg).append('\n');
      expected.add(msg);
    }
    Files.writeString(kmsg, b);
    try (Tmpfs disk = Tmpfs.mount(spoolDir, "1m")) {
      Path filler = spoolDir.resolve("filler"); // not a segment: the spool ignores it
      Files.write(filler, new byte[768 * 1024]);
      AgentSettings s =
          AgentSettings.builder()
              .kafka(new KafkaSettings(BROKER.bootstrapServers(), Map.of()))
              .globs(List.of())
              .stateDir(state.toString())
              .kernelLog(kmsg.toString())
              .gpuSampleIntervalMs(0)
              .httpPort(-1)
              .closeInactiveMs(300_000)
              .procDir(proc.toString())
              .runSpoolRoot(dir.resolve("spools").toString())
              .nvidiaSmi(dir.resolve("no-nvidia-smi").toString())
              .build();
      long taken;
      try (AgentRuntime agent = new AgentRuntime(s, Clock.systemUTC())) {
        agent.start(false);
        Await.until(
            "the spool full, the kernel source waiting for room",
            () -> agent.kernelSource() != null && agent.kernelSource().spoolRetries() > 1,
            Duration.ofSeconds(60));
        taken = agent.kernelSource().shipped();
        assertTrue(taken > 0 && taken < XIDS, "some Xids spooled, not all: " + taken);
      } // stops while the kernel source waits
      long cursor =
          dev.cudawatch.common.wire.WireJson.mapper()
              .readTree(state.resolve("kernel/kmsg-cursor").toFile())
              .path("seq")
              .asLong(-1);
      assertEquals(taken - 1, cursor, "the cursor stops at the last Xid spooled, seq " + taken);

      Files.delete(filler); // room again
      try (AgentRuntime agent = new AgentRuntime(s, Clock.systemUTC())) {
        agent.start(false);
        Set<String> seen = new HashSet<>();
        for (byte[] v :
            BROKER.readUntil(
                Topics.LOGS,
                got -> texts(got).containsAll(expected),
                Duration.ofMillis(500),
                Duration.ofSeconds(90),
                false)) {
          seen.addAll(texts(List.of(v)));
        }
        Set<String> missing = new TreeSet<>(expected);
        missing.removeAll(seen);
        assertEquals(Set.of(), missing, "every Xid shipped once there was room");
        assertEquals(0, agent.spoolErrors());
      }
    }
  }

  private static Set<String> texts(List<byte[]> values) {
    Set<String> out = new HashSet<>();
    for (byte[] v : values) {
      try {
        LogRecord r = WireJson.readLogRecord(v);
        out.add(r.text());
      } catch (dev.cudawatch.common.wire.WireFormatException e) {
        throw new AssertionError(e);
      }
    }
    return out;
  }
}
