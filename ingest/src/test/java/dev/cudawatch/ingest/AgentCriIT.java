package dev.cudawatch.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import dev.cudawatch.common.Topics;
import dev.cudawatch.common.config.ConfigLoader;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.ingest.files.FilePosition;
import dev.cudawatch.ingest.files.PositionStore;
import dev.cudawatch.ingest.ship.Shipper;
import dev.cudawatch.kafka.embedded.EmbeddedKafkaBroker;
import dev.cudawatch.kafka.embedded.KafkaBrokerExtension;
import dev.cudawatch.kafka.embedded.TopicReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Container logs as containerd and CRI-O write them under /var/log/pods (the kubelet's CRI logging
 * format, {@code <RFC3339Nano time> <stdout|stderr> <P|F> <content>}; see CriLineDecoderTest for
 * the sources), followed by the agent with {@code format: cri} and shipped to a real broker. The
 * agent stops while a long line is half written (its P fragments on disk, its F not yet): after the
 * restart the joined line arrives once, whole, and nothing else is lost or repeated.
 */
class AgentCriIT {
  @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();

  @TempDir Path dir;

  private static void append(Path f, String... lines) throws Exception {
    Files.writeString(
        f,
        String.join("", lines),
        StandardCharsets.UTF_8,
        StandardOpenOption.CREATE,
        StandardOpenOption.APPEND);
  }

  @Test
  void containerLogsArriveAsTheLinesTheContainerPrinted() throws Exception {
    EmbeddedKafkaBroker broker = KAFKA.broker();
    broker.createTopics(Topics.ALL, 1);
    Path pods = dir.resolve("pods");
    Path container = Files.createDirectories(pods.resolve("ml_trainer-0_0f4c-11ee/trainer"));
    Path log = container.resolve("0.log");
    Path plain = Files.createDirectories(dir.resolve("training")).resolve("train.log");
    Path state = dir.resolve("state");
    Path config =
        Files.writeString(
            dir.resolve("agent.yaml"),
            String.join(
                "\n",
                "kafka:",
                "  bootstrap_servers: " + broker.bootstrapServers(),
                "host: node-1",
                "files:",
                "  - " + dir.resolve("training") + "/*.log",
                "  - {path: \"" + pods + "/*/*/*.log\", format: cri}",
                "state_dir: " + state,
                "scan_interval_ms: 0",
                "gpu_sample_interval_ms: 0",
                "http_port: -1",
                ""));
    AgentSettings settings =
        new ConfigLoader("CUDAWATCH_AGENT", Map.of()).load(config, AgentSettings.class);

    String first = "2026-11-22T10:00:00.100000000Z stdout F [rank0]: step 1 loss 2.31\n";
    String p1 =
        "2026-11-22T10:00:01.000000001Z stdout P {\"step\": 2, \"weights\": \""
            + "a".repeat(300)
            + "\n";
    String p2 = "2026-11-22T10:00:01.000000002Z stdout P " + "b".repeat(300) + "\n";
    append(log, first, p1, p2);
    append(plain, "plain line\n");
    try (Shipper shipper = new Shipper(settings.kafka());
        Agent agent = new Agent(settings, shipper, Clock.systemUTC())) {
      agent.pollOnce();
      agent.pollOnce();
    } // close: flush, wait for acks, checkpoint with the group still open
    long checkpointed =
        new PositionStore(state)
            .load().values().stream()
                .filter(p -> p.path().equals(log.toString()))
                .mapToLong(FilePosition::position)
                .findFirst()
                .orElseThrow();
    assertEquals(first.length(), checkpointed, "the open group is read again after a restart");

    String f = "2026-11-22T10:00:01.000000003Z stdout F \"}\n";
    String tqdm = "2026-11-22T10:00:02Z stderr F \r 10%|#         | 1/10\r100%|##########| 10/10\n";
    append(log, f, tqdm, "runc: not a CRI line\n");
    long malformed;
    try (Shipper shipper = new Shipper(settings.kafka());
        Agent agent = new Agent(settings, shipper, Clock.systemUTC())) {
      agent.pollOnce();
      agent.pollOnce();
      malformed = agent.tailer().criMalformed();
    }
    assertEquals(1, malformed);

    List<LogRecord> got = readAll(broker);
    List<LogRecord> fromPod = got.stream().filter(r -> r.source().equals(log.toString())).toList();
    assertEquals(
        List.of(
            "[rank0]: step 1 loss 2.31",
            "{\"step\": 2, \"weights\": \"" + "a".repeat(300) + "b".repeat(300) + "\"}",
            "100%|##########| 10/10",
            "runc: not a CRI line"),
        fromPod.stream().map(LogRecord::text).toList(),
        "each line once, in order, with no fragment alone");
    assertEquals(
        List.of("stdout", "stdout", "stderr", "file"),
        fromPod.stream().map(LogRecord::stream).toList());
    assertEquals(Instant.parse("2026-11-22T10:00:00.1Z"), fromPod.get(0).eventTime());
    assertEquals(Instant.parse("2026-11-22T10:00:01.000000001Z"), fromPod.get(1).eventTime());
    assertEquals(first.length(), fromPod.get(1).offset());
    LogRecord plainLine =
        got.stream().filter(r -> r.source().equals(plain.toString())).findFirst().orElse(null);
    assertNotNull(plainLine);
    assertEquals("plain line", plainLine.text());
    assertEquals("file", plainLine.stream());
  }

  private static List<LogRecord> readAll(EmbeddedKafkaBroker broker) throws Exception {
    List<LogRecord> out = new ArrayList<>();
    for (byte[] b :
        TopicReader.readAll(
            broker.bootstrapServers(),
            Topics.LOGS,
            1,
            Duration.ofSeconds(3),
            Duration.ofSeconds(60),
            false)) {
      out.add(WireJson.readLogRecord(b));
    }
    return out;
  }
}
