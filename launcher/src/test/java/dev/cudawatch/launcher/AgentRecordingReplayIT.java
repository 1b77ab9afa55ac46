package dev.cudawatch.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.Topics;
import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.JobFailure;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.common.wire.WireFormatException;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.ingest.spool.DiskSpool;
import dev.cudawatch.kafka.embedded.EmbeddedKafkaBroker;
import dev.cudawatch.kafka.embedded.KafkaBrokerExtension;
import dev.cudawatch.kafka.embedded.TopicReader;
import dev.cudawatch.processor.ProcessorMain;
import dev.cudawatch.processor.config.ProcessorSettings;
import dev.cudawatch.processor.jobs.GroupJobFailures;
import dev.cudawatch.testkit.Await;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.zip.GZIPInputStream;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The node agent's own recording of two real 2-GPU jobs on H200s whose rank 1 hit a device assert,
 * every worker under `cudawatch run` ({@code diagnosis/src/test/resources/multigpu/
 * agent-assert-rank1/}, see the README there): the real agent followed /dev/kmsg, sampled the GPUs
 * and adopted `run`'s spools with Kafka unreachable, so its disk spool holds every record it would
 * have shipped. Those records go unchanged to {@code cudawatch.logs} and through the real processor
 * job. On the device the agent joined both Xid 43 lines to their process (metrics: joined 2, gone
 * 0), so the kernel record itself names job, rank 1 and GPU 1. Each job must get exactly one
 * JobFailure naming rank 1 on GPU 1 of gpu-node-1 (and its alert), and the Xid incident must carry
 * the join (see below why there is one for the two jobs).
 */
class AgentRecordingReplayIT {
  @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();

  private static final Path RECORDING =
      Path.of("../diagnosis/src/test/resources/multigpu/agent-assert-rank1")
          .toAbsolutePath()
          .normalize();
  private static final String HOST = "gpu-node-1";

  /** The most clock skew the processor allows (its settings' bound). */
  private static final long MAX_SKEW_SECONDS = 600;

  private static final List<String> JOBS = List.of("job-assert-run", "job-assert-linger");

  @TempDir Path dir;

  @Test
  void eachJobGetsOneFailureNamingRankOneOnGpuOne() throws Exception {
    List<byte[][]> records = recordedRecords();
    Instant lastRecorded = Instant.EPOCH;
    for (byte[][] kv : records) {
      LogRecord r = WireJson.read(kv[1], LogRecord.class);
      lastRecorded = r.eventTime().isAfter(lastRecorded) ? r.eventTime() : lastRecorded;
    }
    // the recording as the agent wrote it: the kernel's Xid carries what the pid join found
    List<LogRecord> xids =
        records.stream()
            .map(kv -> read(kv[1]))
            .filter(r -> r.kind() == RecordKind.KERNEL && r.text().contains("Xid"))
            .toList();
    assertEquals(2, xids.size(), "one Xid 43 per job: " + xids);
    for (int k = 0; k < 2; k++) {
      assertEquals(JOBS.get(k), xids.get(k).job(), xids.get(k).toString());
      assertEquals(1, xids.get(k).rank());
      assertEquals(1, xids.get(k).gpu());
    }

    EmbeddedKafkaBroker broker = KAFKA.broker();
    broker.createTopics(Topics.ALL, 2);
    try (LocalFlinkJob flink = startJob(broker)) {
      flink.awaitReady(Duration.ofSeconds(120));
      replay(broker, records, lastRecorded);
    }
  }

  private void replay(EmbeddedKafkaBroker broker, List<byte[][]> records, Instant lastRecorded)
      throws Exception {
    // the fleet's event time moves on: a host OOM on another node 15.5 minutes after the
    // recording's end closes both jobs' sessions (15 minutes of event time without an incident of
    // the job). The processor clamps an event time to ingest time + its allowed skew, so that line
    // is believed only once the wall clock is within MAX_SKEW_SECONDS of it (from 06:56Z on the
    // capture's day: the recording is from 2026-11-26T06:50Z)
    Instant closing = lastRecorded.plusSeconds(15 * 60 + 30);
    {
      assertTrue(
          Instant.now().plusSeconds(MAX_SKEW_SECONDS).isAfter(closing),
          "the closing line would be clamped: is this machine's clock right?");
      try (KafkaProducer<byte[], byte[]> p = producer(broker)) {
        for (byte[][] kv : records) {
          p.send(new ProducerRecord<>(Topics.LOGS, kv[0], kv[1]));
        }
        p.send(record(closingLine(closing)));
        p.flush();
      }

      // The two Xid lines are adjacent in the kernel log (seq 373 and 374, 21 s apart) but name
      // different pids, so they are two gpu_xid incidents (nvrm_xid merges on xid, pci and pid),
      // each carrying the job, rank 1 and GPU 1 the agent joined from its pid's environment.
      List<Incident> xids =
          Await.until(
                  "the Xid 43 incident",
                  () ->
                      new Seen(
                          decode(
                              TopicReader.readAll(
                                  broker.bootstrapServers(),
                                  Topics.INCIDENTS,
                                  1,
                                  Duration.ofSeconds(2),
                                  Duration.ofSeconds(10),
                                  true),
                              WireJson::readIncident)),
                  seen -> xidIncidents(seen.all()).size() >= 2,
                  Duration.ofSeconds(180))
              .all();
      assertEquals(
          Set.copyOf(JOBS),
          xidIncidents(xids).stream()
              .map(Incident::job)
              .collect(java.util.stream.Collectors.toSet()),
          "one Xid incident per job, each joined to its own: " + xidIncidents(xids));
      for (Incident xid : xidIncidents(xids)) {
        assertEquals(HOST, xid.host(), xid.toString());
        assertEquals(1L, ((Number) xid.fields().get("rank")).longValue(), xid.toString());
        assertEquals(1L, ((Number) xid.fields().get("gpu")).longValue(), xid.toString());
      }

      List<JobFailure> failures =
          decode(
              TopicReader.readUntil(
                  broker.bootstrapServers(),
                  Topics.JOB_FAILURES,
                  got ->
                      JOBS.stream()
                          .allMatch(
                              j ->
                                  got.stream()
                                      .anyMatch(
                                          b ->
                                              new String(b, StandardCharsets.UTF_8)
                                                  .contains("\"" + j + "\""))),
                  Duration.ofSeconds(5),
                  Duration.ofSeconds(180),
                  true),
              b -> WireJson.read(b, JobFailure.class));
      for (String job : JOBS) {
        List<JobFailure> ours = failures.stream().filter(f -> f.job().equals(job)).toList();
        assertEquals(1, ours.size(), "one record for " + job + ": " + failures);
        JobFailure f = ours.get(0);
        assertEquals(1, f.rank(), f.toString());
        assertEquals("1", f.gpu(), f.toString());
        assertEquals(HOST, f.host(), f.toString());
        // each job's root is its own device assert: the Xid lines of two pids are two incidents
        // (nvrm_xid merges on the pid too), so job-assert-run's Xid, printed before
        // job-assert-linger began, is not taken for the later job's
        assertEquals("device_assert", f.rootClass(), f.toString());
        assertEquals(List.of(HOST), f.hosts());
        // the ranks with incidents: rank 0 was only SIGTERMed by torchrun and printed no error
        assertEquals(1, f.ranks(), f.toString());
        assertEquals("earlier_error", f.cause(), f.toString());
      }

      List<Alert> alerts =
          decode(
              TopicReader.readUntil(
                  broker.bootstrapServers(),
                  Topics.ALERTS,
                  got -> JOBS.stream().allMatch(j -> jobAlert(decodeAlerts(got), j) != null),
                  Duration.ofSeconds(3),
                  Duration.ofSeconds(120),
                  true),
              WireJson::readAlert);
      for (String job : JOBS) {
        Alert a = jobAlert(alerts, job);
        assertEquals("1", a.annotations().get("root_rank"), a.annotations().toString());
        assertEquals("1", a.annotations().get("root_gpu"), a.annotations().toString());
        assertEquals(HOST, a.annotations().get("root_host"), a.annotations().toString());
      }
    }
  }

  /** The agent's spool segment (stored gzipped), read by the agent's own reader from a copy. */
  private List<byte[][]> recordedRecords() throws Exception {
    Path seg = dir.resolve("spool").resolve("00000000000000000001.seg");
    Files.createDirectories(seg.getParent());
    try (InputStream in =
        new GZIPInputStream(
            Files.newInputStream(
                RECORDING.resolve("agent-state/spool/00000000000000000001.seg.gz")))) {
      Files.copy(in, seg);
    }
    try (InputStream in = Files.newInputStream(seg)) {
      assertEquals(DiskSpool.FORMAT, DiskSpool.segmentFormat(in));
    }
    List<byte[][]> out = new ArrayList<>();
    long torn;
    try (InputStream in = Files.newInputStream(seg)) {
      // a spool record is [key length][key][value], as the agent's forwarder ships it
      torn =
          DiskSpool.readSegment(
              in,
              0,
              b -> {
                int klen = ByteBuffer.wrap(b).getShort() & 0xffff;
                byte[] key = java.util.Arrays.copyOfRange(b, 2, 2 + klen);
                byte[] value = java.util.Arrays.copyOfRange(b, 2 + klen, b.length);
                out.add(new byte[][] {key, value});
              });
    }
    assertEquals(0, torn, "the agent stopped cleanly: no torn record");
    assertEquals(440, out.size(), "the records the agent spooled");
    return out;
  }

  private static LogRecord closingLine(Instant at) {
    return LogRecord.builder().host("gpu-node-3").kind(RecordKind.KERNEL).stream("kmsg")
        .source("gpu-node-3/kern.log")
        .sourceId("closing")
        .offset(0)
        .eventTime(at)
        .text(
            "[ 2400.654321] Out of memory: Killed process 5151 (python3) total-vm:912345678kB,"
                + " anon-rss:123456789kB, file-rss:0kB, shmem-rss:0kB, UID:1000"
                + " pgtables:456789kB oom_score_adj:0")
        .lineCount(1)
        .build();
  }

  private static ProducerRecord<byte[], byte[]> record(LogRecord r) {
    return new ProducerRecord<>(
        Topics.LOGS, r.streamKey().getBytes(StandardCharsets.UTF_8), WireJson.toBytes(r));
  }

  /** Incidents read so far, shown by class, job, rank and GPU when the wait times out. */
  private record Seen(List<Incident> all) {
    @Override
    public String toString() {
      return all.stream()
          .map(
              i ->
                  i.incidentClass()
                      + "/"
                      + i.job()
                      + "/"
                      + (i.fields() == null ? null : i.fields().get("rank"))
                      + "/"
                      + (i.fields() == null ? null : i.fields().get("xid")))
          .toList()
          .toString();
    }
  }

  private static List<Incident> xidIncidents(List<Incident> all) {
    return all.stream()
        .filter(i -> i.fields() != null && "43".equals(String.valueOf(i.fields().get("xid"))))
        .toList();
  }

  private static Alert jobAlert(List<Alert> all, String job) {
    return all.stream()
        .filter(a -> a.alertName().equals(GroupJobFailures.ALERT_NAME))
        .filter(a -> job.equals(a.labels().get("job")))
        .reduce((x, y) -> y)
        .orElse(null);
  }

  private static List<Alert> decodeAlerts(List<byte[]> bs) {
    return decode(bs, WireJson::readAlert);
  }

  private static LogRecord read(byte[] b) {
    try {
      return WireJson.read(b, LogRecord.class);
    } catch (WireFormatException e) {
      throw new AssertionError(e);
    }
  }

  private interface Reader<T> {
    T read(byte[] b) throws WireFormatException;
  }

  private static <T> List<T> decode(List<byte[]> bs, Reader<T> reader) {
    List<T> out = new ArrayList<>();
    for (byte[] b : bs) {
      try {
        out.add(reader.read(b));
      } catch (WireFormatException e) {
        throw new AssertionError(e);
      }
    }
    return out;
  }

  private static KafkaProducer<byte[], byte[]> producer(EmbeddedKafkaBroker broker) {
    Map<String, Object> p = new HashMap<>();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    return new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
  }

  private static LocalFlinkJob startJob(EmbeddedKafkaBroker broker) throws Exception {
    ProcessorSettings s =
        ProcessorSettings.builder()
            .kafka(new KafkaSettings(broker.bootstrapServers(), Map.of()))
            .groupId("agent-replay-it")
            .parallelism(2)
            .checkpointIntervalMs(500L)
            .transactionalIdPrefix("agent-replay-it-" + System.nanoTime())
            .rules(List.of())
            .maxClockSkewSeconds(MAX_SKEW_SECONDS)
            .build();
    Configuration conf = new Configuration();
    conf.set(RestOptions.PORT, 0);
    conf.set(RestOptions.BIND_ADDRESS, "127.0.0.1");
    StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(2, conf);
    ProcessorMain.configure(env, s);
    ProcessorMain.job(s).build(env);
    return LocalFlinkJob.start(env, conf, 2, "agent-replay-it");
  }
}
