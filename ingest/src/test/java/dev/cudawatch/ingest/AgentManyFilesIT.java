package dev.cudawatch.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cudawatch.common.Topics;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.kafka.embedded.EmbeddedKafkaBroker;
import dev.cudawatch.kafka.embedded.KafkaBrokerExtension;
import dev.cudawatch.testkit.Await;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * 5,000 finished job logs and an agent process at {@code -Xmx64m}: it reads them all, closes them
 * once idle ({@code close_inactive_ms}), and still picks up a new job's failure and a finished log
 * that grows again, from where it was.
 */
class AgentManyFilesIT {
  @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();

  private static final int FILES = 5_000;
  private static final int LINES = 4;

  /** The files' lines and the one record a finished run left spooled. */
  private static final int RECORDS = FILES * LINES + 1;

  @TempDir Path dir;

  @Test
  void fiveThousandFilesAtSixtyFourMegabytesAndANewFailureStillArrives() throws Exception {
    Path logs = dir.resolve("logs");
    for (int i = 0; i < FILES; i++) {
      Path f =
          Files.createDirectories(logs.resolve("job-" + i / 100)).resolve("rank-" + i + ".log");
      StringBuilder b = new StringBuilder();
      for (int k = 0; k < LINES; k++) {
        b.append("file ")
            .append(i)
            .append(" step ")
            .append(k)
            .append(" loss 0.4")
            .append(k)
            .append(" lr 3e-4 tokens/s 81234\n");
      }
      Files.writeString(f, b);
    }
    Path runSpools = dir.resolve("run-spools");
    plantFinishedRunSpool(runSpools);
    int port = EmbeddedKafkaBroker.freePort();
    EmbeddedKafkaBroker broker = KAFKA.broker();
    try (var consumer = consumer(broker)) {
      broker.createTopics(Topics.ALL, 2);
      Path config = dir.resolve("agent.yaml");
      Files.writeString(
          config,
          String.join(
              "\n",
              "kafka:",
              "  bootstrap_servers: " + broker.bootstrapServers(),
              "host: many-files",
              "files: ['" + logs + "/**/*.log']",
              "state_dir: " + dir.resolve("state"),
              "close_inactive_ms: 2000",
              "gpu_sample_interval_ms: 0",
              "http_port: " + port,
              "run_spool_root: " + runSpools,
              ""));
      Process agent = startAgent(config);
      try {
        List<LogRecord> got = new ArrayList<>();
        long t0 = System.nanoTime();
        awaitRecords(consumer, got, r -> true, RECORDS);
        long read = System.nanoTime();
        JsonNode health =
            Await.until(
                "every finished log closed while idle",
                () -> health(port),
                h -> h.path("idle_files").asInt() == FILES,
                Duration.ofSeconds(60));
        // the run's spool was shipped and removed: its finished forwarder is not a dead source
        assertEquals("ok", health.path("status").asText(), health.toString());
        assertTrue(
            got.stream().anyMatch(r -> r.text().equals("left by a run")), "the run spool shipped");
        assertEquals(0, health.path("open_files").asInt(), "no descriptor held for idle files");

        long idle = System.nanoTime();
        long cpuAtIdle = cpuTicks(agent.pid());
        // a new job fails
        Path fresh = Files.createDirectories(logs.resolve("job-new")).resolve("rank-0.log");
        Files.writeString(
            fresh,
            "step 1 loss 0.9\n"
                + "RuntimeError: CUDA error: an illegal memory access was encountered\n");
        awaitRecords(consumer, got, r -> r.text().contains("illegal memory access"), RECORDS + 2);
        long failure = System.nanoTime();
        // a finished log grows again: reopened at its position, same stream
        Path old = logs.resolve("job-17").resolve("rank-1717.log");
        long size = Files.size(old);
        Files.writeString(old, "file 1717 resumed\n", StandardOpenOption.APPEND);
        awaitRecords(consumer, got, r -> r.text().equals("file 1717 resumed"), RECORDS + 3);
        LogRecord resumed =
            got.stream()
                .filter(r -> r.text().equals("file 1717 resumed"))
                .findFirst()
                .orElseThrow();
        LogRecord before =
            got.stream()
                .filter(r -> r.text().startsWith("file 1717 step 0"))
                .findFirst()
                .orElseThrow();
        assertEquals(size, resumed.offset(), "read on from where it was, not from 0");
        assertEquals(before.sourceId(), resumed.sourceId(), "the same stream");
        assertEquals(
            RECORDS + 3,
            got.stream()
                .filter(r -> r.kind() != RecordKind.QUIET) // a file's pause, not a line
                .map(LogRecord::id)
                .distinct()
                .count(),
            "nothing twice");

        double idleCores =
            (cpuTicks(agent.pid()) - cpuAtIdle) / 100.0 / ((System.nanoTime() - idle) / 1e9);
        assertTrue(agent.isAlive(), "the agent runs at -Xmx64m");
        assertEquals("ok", health(port).path("status").asText());
        String out = Files.readString(dir.resolve("agent.out"));
        assertFalse(out.contains("OutOfMemoryError"), out);
        System.out.println(
            "AgentManyFilesIT: "
                + FILES
                + " files at -Xmx64m; "
                + vmHwm(agent.pid())
                + String.format(
                    "; all lines in Kafka after %d ms, all idle %d ms later, the new failure %d ms"
                        + " after it was written",
                    (read - t0) / 1_000_000,
                    (idle - read) / 1_000_000,
                    (failure - idle) / 1_000_000)
                + String.format("; %.3f cores while the files were idle", idleCores)
                + "; metrics: "
                + metric(port, "cudawatch_agent_files_closed_inactive_total"));
      } finally {
        agent.destroy();
        assertTrue(agent.waitFor(30, TimeUnit.SECONDS));
      }
    }
  }

  private void awaitRecords(
      KafkaConsumer<byte[], byte[]> c,
      List<LogRecord> got,
      java.util.function.Predicate<LogRecord> wanted,
      int atLeast) {
    Await.until(
        atLeast + " records in Kafka",
        () -> {
          for (var r : c.poll(Duration.ofMillis(200))) {
            got.add(WireJson.readLogRecord(r.value()));
          }
          return got.size() >= atLeast && got.stream().anyMatch(wanted);
        },
        Boolean.TRUE::equals,
        Duration.ofSeconds(120));
  }

  /**
   * What a {@code cudawatch run} that could not reach Kafka leaves: the agent ships and removes it
   * while the files are read. Before, its forwarder ending then counted as a dead source and the
   * agent stayed "unhealthy": this test failed in fresh clones where other tests' runs spooled
   * under the shared default root (/var/tmp) while it ran.
   */
  private static void plantFinishedRunSpool(Path root) throws Exception {
    Path run =
        Files.createDirectories(
            root.resolve("cudawatch-run-" + System.getProperty("user.name")).resolve("run-1"));
    try (var spool = new dev.cudawatch.ingest.spool.DiskSpool(run, 1 << 20, 1 << 20)) {
      new dev.cudawatch.ingest.streams.SpoolingOutput(spool, 0)
          .write(
              LogRecord.builder().host("many-files").stream("stdout")
                  .source("run")
                  .sourceId("run-1")
                  .offset(0)
                  .eventTime(java.time.Instant.now())
                  .text("left by a run")
                  .build());
      spool.sync();
    }
  }

  private static JsonNode health(int port) throws Exception {
    HttpResponse<String> r =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/healthz")).build(),
                HttpResponse.BodyHandlers.ofString());
    return WireJson.mapper().readTree(r.body());
  }

  private static String metric(int port, String name) throws Exception {
    String body =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString())
            .body();
    return body.lines().filter(l -> l.startsWith(name)).findFirst().orElse(name + " missing");
  }

  /** User plus system CPU time of a process, in clock ticks (1/100 s on Linux). */
  private static long cpuTicks(long pid) throws Exception {
    String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    return Long.parseLong(f[11]) + Long.parseLong(f[12]);
  }

  private static String vmHwm(long pid) {
    try {
      return Files.readAllLines(Path.of("/proc/" + pid + "/status")).stream()
          .filter(l -> l.startsWith("VmHWM") || l.startsWith("VmRSS"))
          .map(l -> l.replaceAll("\\s+", " "))
          .reduce((a, b) -> a + ", " + b)
          .orElse("");
    } catch (Exception e) {
      return "";
    }
  }

  private Process startAgent(Path config) throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    return new ProcessBuilder(
            java,
            "-Xmx64m",
            "-XX:+UseSerialGC",
            "-cp",
            System.getProperty("java.class.path"),
            AgentMain.class.getName(),
            "--config",
            config.toString())
        .redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("agent.out").toFile()))
        .start();
  }

  private static KafkaConsumer<byte[], byte[]> consumer(EmbeddedKafkaBroker broker) {
    var c =
        new KafkaConsumer<byte[], byte[]>(
            Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                broker.bootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG,
                "many-files",
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG,
                "earliest"),
            new ByteArrayDeserializer(),
            new ByteArrayDeserializer());
    c.subscribe(List.of(Topics.LOGS));
    return c;
  }
}
