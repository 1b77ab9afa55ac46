package dev.cudawatch.processor.formats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.cudawatch.common.Topics;
import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.WireFormatException;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.kafka.embedded.EmbeddedKafkaBroker;
import dev.cudawatch.kafka.embedded.KafkaBrokerExtension;
import dev.cudawatch.kafka.embedded.TopicReader;
import dev.cudawatch.processor.ProcessorMain;
import dev.cudawatch.processor.config.ProcessorSettings;
import dev.cudawatch.testkit.Await;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real rsyslogd (Debian's rsyslog and rsyslog-kafka) runs {@code
 * deploy/shippers/rsyslog/cudawatch.conf}: imfile follows a kernel-log file and a training log,
 * omkafka ships both to the real broker, and the job, reading the topic as {@code rsyslog}, reports
 * the Xid and the application's illegal memory access with the Xid's verdict.
 */
class RsyslogShipperIT {
  @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();

  private static final Path RSYSLOGD = Path.of("/usr/sbin/rsyslogd");
  private static final Path OMKAFKA = Path.of("/usr/lib/x86_64-linux-gnu/rsyslog/omkafka.so");
  private static final Path CONF = Path.of("../deploy/shippers/rsyslog/cudawatch.conf");
  private static final Path GOLDEN = Path.of("../diagnosis/src/test/resources/golden");
  private static final String TOPIC = "cudawatch.rsyslog";

  @RegisterExtension
  static final MiniClusterExtension FLINK =
      new MiniClusterExtension(
          new MiniClusterResourceConfiguration.Builder()
              .setNumberTaskManagers(1)
              .setNumberSlotsPerTaskManager(2)
              .build());

  @TempDir Path dir;

  @Test
  void kernelXidAndTrainingLogShippedByRsyslogBecomeIncidentsWithAVerdict() throws Exception {
    requireRsyslog();
    EmbeddedKafkaBroker broker = KAFKA.broker();
    List<String> topics = new ArrayList<>(Topics.ALL);
    topics.add(TOPIC);
    broker.createTopics(topics, 2);
    Path kern = dir.resolve("dmesg");
    Path log = dir.resolve("jobs/job-42/rank-3.log");
    Files.createDirectories(log.getParent());
    List<String> dmesg =
        Files.readAllLines(GOLDEN.resolve("dmesg_nvrm_1.log")).stream()
            .filter(l -> l.contains("GPU at PCI") || l.contains("): 13, "))
            .toList();
    Files.write(kern, dmesg);
    Files.writeString(log, "step 0: starting\n");
    Path conf = conf(broker.bootstrapServers(), kern, dir.resolve("jobs"));
    ProcessBuilder rsyslogd =
        new ProcessBuilder(
                RSYSLOGD.toString(),
                "-n",
                "-f",
                conf.toString(),
                "-i",
                dir.resolve("pid").toString())
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("rsyslogd.out").toFile());
    // rsyslogd keeps the real clock, as a node's shipper does: under faketime (the suite's
    // shifted-clock run) librdkafka's threads stall on the faked clock and ship nothing
    rsyslogd
        .environment()
        .keySet()
        .removeIf(k -> k.equals("LD_PRELOAD") || k.startsWith("FAKETIME"));
    Process rsyslog = rsyslogd.start();
    JobClient job = null;
    try {
      // rsyslog follows: the kernel lines are shipped, then the job fails in its log
      Await.until(
          "rsyslog shipping the kernel log to "
              + TOPIC
              + " (rsyslogd output: "
              + dir.resolve("rsyslogd.out")
              + ")",
          () -> shipped(broker, TOPIC),
          n -> n >= dmesg.size() + 1,
          Duration.ofSeconds(60));
      Files.write(
          log,
          Files.readAllLines(GOLDEN.resolve("illegal_address_torch.log")),
          StandardOpenOption.APPEND);
      job = startJob(broker);
      List<Incident> incidents = new ArrayList<>();
      TopicReader.readUntil(
              broker.bootstrapServers(),
              Topics.INCIDENTS,
              got -> {
                incidents.clear();
                got.forEach(b -> incidents.add(incident(b)));
                return incidents.stream().anyMatch(i -> i.verdict() != null);
              },
              Duration.ofSeconds(2),
              Duration.ofSeconds(90),
              true)
          .size();
      Incident xid =
          incidents.stream()
              .filter(i -> "gpu_xid".equals(i.incidentClass()))
              .findFirst()
              .orElseThrow(() -> new AssertionError("no Xid incident: " + incidents));
      assertEquals("gpu-node-7", xid.host());
      assertEquals(13L, ((Number) xid.fields().get("xid")).longValue());
      Incident judged =
          incidents.stream()
              .filter(i -> i.verdict() != null)
              .findFirst()
              .orElseThrow(() -> new AssertionError("no verdict: " + incidents));
      assertEquals("illegal_memory_access", judged.incidentClass());
      assertEquals("application_fault", judged.verdict(), "Xid 13 beside it: the application");
      assertEquals("gpu-node-7", judged.host());
      assertEquals("job-42", judged.job(), "the job from the path pattern");
      assertEquals(3L, ((Number) judged.fields().get("rank")).longValue());
      assertEquals(
          "/tmp/capture/cases/illegal_triton2.py:13",
          judged.fields().get("user_frame"),
          "the traceback regrouped from one record per line");
      assertTrue(
          incidents.stream().noneMatch(i -> "step 0: starting".equals(i.summary())),
          "the training log's other lines raise nothing");
    } finally {
      if (job != null) {
        job.cancel().get();
      }
      rsyslog.destroy();
      if (!rsyslog.waitFor(20, TimeUnit.SECONDS)) {
        rsyslog.destroyForcibly();
      }
    }
  }

  /** Fails in CI, skips elsewhere, when rsyslog or its Kafka output is not installed. */
  private static void requireRsyslog() {
    if (!Files.isExecutable(RSYSLOGD) || !Files.isRegularFile(OMKAFKA)) {
      String why = "rsyslog with omkafka is not installed (apt-get install rsyslog rsyslog-kafka)";
      if (System.getenv("CI") != null) {
        fail(why);
      }
      assumeTrue(false, why);
    }
  }

  /** The deployed drop-in, pointed at this broker and these files, with a state directory. */
  private Path conf(String bootstrap, Path kern, Path jobs) throws Exception {
    String c = Files.readString(CONF);
    String kernelInput = "# KERNEL-FILE input(type=\"imfile\" File=\"/var/log/dmesg\"";
    assertTrue(c.contains(kernelInput) && c.contains("\"kafka:9092\""), "the drop-in's shape");
    c =
        c.replace("\"kafka:9092\"", "\"" + bootstrap + "\"")
            .replace("/var/log/jobs/", jobs + "/")
            .replace(kernelInput, "input(type=\"imfile\" File=\"" + kern + "\"");
    Path work = Files.createDirectories(dir.resolve("rsyslog-state"));
    Path out = dir.resolve("rsyslog.conf");
    Files.writeString(
        out,
        "global(workDirectory=\""
            + work
            + "\" localHostname=\"gpu-node-7\")\n"
            // without a system daemon: no imklog here, the kernel log comes from the file
            + c,
        StandardCharsets.UTF_8);
    return out;
  }

  private static int shipped(EmbeddedKafkaBroker broker, String topic) {
    return TopicReader.readAll(
            broker.bootstrapServers(),
            topic,
            Integer.MAX_VALUE,
            Duration.ZERO,
            Duration.ofSeconds(2),
            false)
        .size();
  }

  private static JobClient startJob(EmbeddedKafkaBroker broker) throws Exception {
    ProcessorSettings s =
        ProcessorSettings.builder()
            .kafka(new KafkaSettings(broker.bootstrapServers(), Map.of()))
            .groupId("rsyslog-it")
            .transactionalIdPrefix("rsyslog-it-" + System.nanoTime())
            .inputs(
                List.of(
                    new InputSettings(
                        TOPIC,
                        RecordFormat.RSYSLOG,
                        "/jobs/(?P<job>[^/]+)/rank-(?P<rank>\\d+)\\.log$")))
            .build();
    s.validate("");
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    ProcessorMain.configure(env, s);
    ProcessorMain.job(s).build(env);
    return env.executeAsync("rsyslog-it");
  }

  private static Incident incident(byte[] b) {
    try {
      return WireJson.readIncident(b);
    } catch (WireFormatException e) {
      throw new AssertionError(e);
    }
  }
}
