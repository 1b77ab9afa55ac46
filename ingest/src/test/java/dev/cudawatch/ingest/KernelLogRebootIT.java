package dev.cudawatch.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.Topics;
import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.kafka.embedded.EmbeddedKafkaBroker;
import dev.cudawatch.kafka.embedded.KafkaBrokerExtension;
import dev.cudawatch.testkit.Await;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node reboots: {@code /dev/kmsg} numbers its records from 0 again and the boot id changes. The
 * real NVRM lines of an H200 node are fed as kmsg records, the agent restarts within the boot, the
 * node reboots and logs the same Xids at the same sequence numbers. Every post-reboot Xid must
 * survive the processor's duplicate rule (per stream, drop an offset not past the last), and the
 * restart within a boot must not ship the ring buffer again.
 */
class KernelLogRebootIT {
  @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();

  private static final long BTIME_A = 1_763_800_000L;
  private static final long BTIME_B = 1_763_900_000L;
  private static final String BOOT_A = "6c3e1f0a-aaaa-4c1e-9d0e-000000000001";
  private static final String BOOT_B = "9d2b7c44-bbbb-4f3a-8e21-000000000002";

  @TempDir Path dir;

  @Test
  void everyXidAfterARebootIsDeliveredAndARestartShipsNothingTwice() throws Exception {
    List<String[]> lines = dmesg(); // {seconds, message}
    long xids = lines.stream().filter(l -> l[1].contains("Xid")).count();
    Path proc = dir.resolve("proc");
    Path kmsg = Files.createDirectories(dir.resolve("dev")).resolve("kmsg");
    boot(proc, BOOT_A, BTIME_A);
    Files.writeString(kmsg, records(lines));

    List<LogRecord> got = new ArrayList<>();
    EmbeddedKafkaBroker broker = KAFKA.broker();
    try (var consumer = consumer(broker)) {
      broker.createTopics(Topics.ALL, 2);
      AgentSettings s =
          AgentSettings.builder()
              .kafka(new KafkaSettings(broker.bootstrapServers(), Map.of()))
              .globs(List.of())
              .stateDir(dir.resolve("state").toString())
              .kernelLog(kmsg.toString())
              .gpuSampleIntervalMs(0)
              .httpPort(-1)
              .closeInactiveMs(300_000)
              .procDir(proc.toString())
              .build();

      try (AgentRuntime agent = new AgentRuntime(s, Clock.systemUTC())) {
        agent.start(false);
        awaitRecords(consumer, got, lines.size());
      }
      // the agent restarts within the same boot: the ring buffer is read again from seq 0
      try (AgentRuntime agent = new AgentRuntime(s, Clock.systemUTC())) {
        agent.start(false);
        Files.writeString(
            kmsg,
            "3,1000,400000000,-;NVRM: Xid (PCI:0000:00:06): 79, pid=0, GPU has fallen off the bus.\n",
            StandardOpenOption.APPEND);
        // same stream, same partition, in order: anything read twice would arrive before this
        awaitRecords(consumer, got, lines.size() + 1);
        Await.until(
            "the restarted source to skip the records it took before",
            () -> agent.kernelSource().skipped(),
            n -> n == 2L * lines.size(), // the NVRM records and the unrelated ones between
            Duration.ofSeconds(10));
      }
      assertEquals(lines.size() + 1, got.size(), "nothing shipped twice after the restart");
      assertEquals(got.size(), got.stream().map(LogRecord::id).distinct().count());

      // the reboot: a new boot id, a new boot time, sequence numbers from 0, the same Xids again
      boot(proc, BOOT_B, BTIME_B);
      Files.writeString(kmsg, records(lines));
      try (AgentRuntime agent = new AgentRuntime(s, Clock.systemUTC())) {
        agent.start(false);
        awaitRecords(consumer, got, 2 * lines.size() + 1);
      }
    }

    List<LogRecord> afterReboot = got.stream().filter(r -> BOOT_B.equals(r.sourceId())).toList();
    assertEquals(lines.size(), afterReboot.size(), "every post-reboot NVRM record shipped");
    assertEquals(got.size(), got.stream().map(LogRecord::id).distinct().count(), "ids unique");
    assertTrue(afterReboot.stream().allMatch(r -> r.kind() == RecordKind.KERNEL));
    // the same sequence numbers as before the reboot, yet new records
    assertEquals(
        got.stream()
            .filter(r -> BOOT_A.equals(r.sourceId()))
            .limit(lines.size())
            .map(LogRecord::offset)
            .toList(),
        afterReboot.stream().map(LogRecord::offset).toList());
    // the processor drops a record whose offset is not past the last of its stream (ClassifyStream)
    long xidsKept =
        survivors(got, LogRecord::streamKey).stream()
            .filter(r -> BOOT_B.equals(r.sourceId()) && r.text().contains("Xid"))
            .count();
    assertEquals(xids, xidsKept, "every post-reboot Xid reaches classification");
    // named as before (no boot in the stream), every one of them was a "duplicate"
    long keptWithoutBoot =
        survivors(got, r -> r.host() + "|" + r.source() + "|" + r.stream()).stream()
            .filter(r -> BOOT_B.equals(r.sourceId()) && r.text().contains("Xid"))
            .count();
    assertEquals(0, keptWithoutBoot);
    // event time: the boot time plus the record's microseconds since boot
    assertEquals(
        Instant.ofEpochSecond(BTIME_B).plusNanos(133_909_990_000L),
        afterReboot.stream()
            .filter(r -> r.text().contains("Xid"))
            .findFirst()
            .orElseThrow()
            .eventTime());
  }

  /** The records the processor's duplicate rule keeps, streams named by {@code key}. */
  private static List<LogRecord> survivors(
      List<LogRecord> inOrder, java.util.function.Function<LogRecord, String> key) {
    Map<String, Long> last = new HashMap<>();
    List<LogRecord> kept = new ArrayList<>();
    for (LogRecord r : inOrder) {
      Long l = last.get(key.apply(r));
      if (l == null || r.offset() > l) {
        kept.add(r);
        last.put(key.apply(r), r.offset());
      }
    }
    return kept;
  }

  private static void awaitRecords(KafkaConsumer<byte[], byte[]> c, List<LogRecord> got, int n) {
    Await.until(
        n + " kernel records in Kafka",
        () -> {
          for (var r : c.poll(Duration.ofMillis(200))) {
            got.add(WireJson.readLogRecord(r.value()));
          }
          return got.size();
        },
        size -> size >= n,
        Duration.ofSeconds(60));
  }

  static void boot(Path proc, String bootId, long btime) throws Exception {
    Files.createDirectories(proc.resolve("sys/kernel/random"));
    Files.writeString(proc.resolve("sys/kernel/random/boot_id"), bootId + "\n");
    Files.writeString(
        proc.resolve("stat"),
        "cpu  10 0 10 100 0 0 0 0 0 0\nintr 0\nctxt 0\nbtime " + btime + "\nprocesses 1\n");
  }

  /** The real NVRM lines, as dmesg printed them: {seconds since boot, message}. */
  static List<String[]> dmesg() throws Exception {
    try (InputStream in = KernelLogRebootIT.class.getResourceAsStream("/kmsg/dmesg_nvrm_1.log")) {
      List<String[]> out = new ArrayList<>();
      for (String l : new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().toList()) {
        int close = l.indexOf(']');
        out.add(new String[] {l.substring(1, close).strip(), l.substring(close + 1).strip()});
      }
      return out;
    }
  }

  /**
   * One boot's ring buffer in /dev/kmsg's format, sequence numbers from 0, with the unrelated
   * records (and a continuation line) a real one holds between the NVRM ones.
   */
  static String records(List<String[]> lines) {
    StringBuilder b = new StringBuilder();
    long seq = 0;
    for (String[] l : lines) {
      long us = Math.round(Double.parseDouble(l[0]) * 1_000_000);
      b.append("6,").append(seq++).append(',').append(us).append(",-;").append(l[1]).append('\n');
      b.append("6,")
          .append(seq++)
          .append(',')
          .append(us + 10)
          .append(",-;")
          .append("usb 1-1: new high-speed USB device number 2 using xhci_hcd\n")
          .append(" SUBSYSTEM=usb\n DEVICE=c189:1\n");
    }
    return b.toString();
  }

  static KafkaConsumer<byte[], byte[]> consumer(EmbeddedKafkaBroker broker) {
    var c =
        new KafkaConsumer<byte[], byte[]>(
            Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                broker.bootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG,
                "kmsg-reader",
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG,
                "earliest"),
            new ByteArrayDeserializer(),
            new ByteArrayDeserializer());
    c.subscribe(List.of(Topics.LOGS));
    return c;
  }
}
