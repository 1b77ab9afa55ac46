package dev.cudawatch.processor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.Topics;
import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.common.gpu.MemorySample;
import dev.cudawatch.common.gpu.NvidiaSmiCsv;
import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.common.wire.WireFormatException;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.kafka.embedded.KafkaBrokerExtension;
import dev.cudawatch.kafka.embedded.TopicReader;
import dev.cudawatch.processor.config.ProcessorSettings;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The whole job as wired, with {@code pipeline.generic-types: false}: every edge and every state of
 * every operator is fed real lines, so a type that falls back to Kryo fails this build (at
 * submission for an edge, at the operator's start for a state; restarts are off so that shows).
 */
class KryoFreeJobIT {
  @RegisterExtension
  static final MiniClusterExtension FLINK =
      new MiniClusterExtension(
          new MiniClusterResourceConfiguration.Builder()
              .setNumberTaskManagers(1)
              .setNumberSlotsPerTaskManager(2)
              .build());

  private static final Instant T0 = Instant.parse("2026-11-22T03:00:00Z");
  private static final String XID_31 =
      "NVRM: Xid (PCI:0000:00:06): 31, pid=819, name=python3, channel 0x0000000a, intr 00000000."
          + " MMU Fault: ENGINE GRAPHICS GPC1 GPCCLIENT_T1_8 faulted @ 0x7f53_cfe40000. Fault is of"
          + " type FAULT_PDE ACCESS_TYPE_VIRT_WRITE";

  @RegisterExtension
  static final KafkaBrokerExtension BROKER = new KafkaBrokerExtension(Topics.ALL, 2);

  @Test
  void theProductionSettingsRefuseATypeThatWouldFallBackToKryo() {
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    ProcessorMain.configure(env, settings("control"));
    assertTrue(env.getConfig().getSerializerConfig().hasGenericTypesDisabled());
    // the control: a stream of a type Flink can only serialize with Kryo is refused
    Exception e =
        assertThrows(
            UnsupportedOperationException.class,
            () -> {
              env.fromData(new StringBuilder("x")).map(sb -> sb.append('!')).print();
              env.getStreamGraph();
            });
    assertTrue(e.getMessage().contains("Generic types have been disabled"), e.getMessage());
  }

  @Test
  void everyOperatorsStateAndEdgesRunWithoutKryo() throws Exception {
    List<LogRecord> first = new ArrayList<>();
    // GPU memory samples, then the real OOM on that GPU: the memory trend's state and its join
    for (int k = 5; k >= 1; k--) {
      MemorySample s =
          new MemorySample(
              T0.minusSeconds(k).toEpochMilli(), 0, "0000:00:06", (100L - k) << 30, 140L << 30);
      first.add(
          record("oom-host", null, 0, null, T0.minusSeconds(k), NvidiaSmiCsv.toAgentRow(s))
              .kind(RecordKind.GPU_MEMORY)
              .stream("nvidia-smi")
              .source("nvidia-smi")
              .offset(5 - k)
              .build());
    }
    long offset = 0;
    for (String l :
        Files.readAllLines(Path.of("../diagnosis/src/test/resources/golden/oom_single.log"))) {
      first.add(record("oom-host", "oom-job", 0, null, T0, l).offset(offset).build());
      offset += l.length() + 1;
    }
    // a job run by cudawatch run (its pid known) faults on GPU 0 of another host
    first.add(
        record(
                "xid-host",
                "run-job",
                0,
                1,
                T0,
                "RuntimeError: CUDA error: an illegal memory access was encountered")
            .source("run:run-job/stderr")
            .sourceId("run-job")
            .attribution(Map.of("pid", "819"))
            .build());
    produce(first, "{broken".getBytes(StandardCharsets.UTF_8));
    JobClient job = startJob();
    try {
      // the run's incident is out, so its GPU holder is in state before the kernel line comes
      await(
          job,
          Topics.INCIDENTS,
          got ->
              has(incidents(got), "oom-host", "cuda_oom")
                  && has(incidents(got), "xid-host", "illegal_memory_access"));
      produce(
          List.of(
              record("xid-host", null, 0, null, T0.plusSeconds(2), XID_31)
                  .kind(RecordKind.KERNEL)
                  .stream("kmsg")
                  .source("/dev/kmsg")
                  .build()));
      List<Incident> incidents =
          incidents(
              await(
                  job,
                  Topics.INCIDENTS,
                  got ->
                      incidents(got).stream()
                          .anyMatch(i -> "application_fault".equals(i.verdict()))));
      Incident xid = only(incidents, "xid-host", "gpu_xid", false);
      assertEquals("run-job", xid.job(), "the kernel line's job, from the GPU holder state");
      Incident faulted = only(incidents, "xid-host", "illegal_memory_access", true);
      assertEquals("application_fault", faulted.verdict(), "correlation's pending state");
      assertEquals(
          214748364800L,
          only(incidents, "oom-host", "cuda_oom", false).fields().get("tried_to_allocate_bytes"));

      List<Alert> alerts =
          alerts(
              await(
                  job,
                  Topics.ALERTS,
                  got ->
                      alerts(got).stream()
                          .anyMatch(
                              a ->
                                  a.alertName().equals("JobFailure")
                                      && "run-job".equals(a.labels().get("job")))));
      assertTrue(
          alerts.stream().anyMatch(a -> "cuda_oom".equals(a.labels().get("class"))),
          "the OOM's alert: " + alerts);
      assertTrue(
          alerts.stream()
              .anyMatch(
                  a ->
                      a.alertName().equals("JobFailure")
                          && "run-job".equals(a.labels().get("job"))),
          "one root cause per failed job, from the job members' state: " + alerts);
      assertTrue(
          !TopicReader.readAll(
                  BROKER.bootstrapServers(),
                  Topics.DEAD_LETTER,
                  1,
                  Duration.ZERO,
                  Duration.ofSeconds(30),
                  true)
              .isEmpty(),
          "the broken record's dead letter");
    } finally {
      job.cancel().get();
    }
  }

  private static boolean has(List<Incident> incidents, String host, String incidentClass) {
    return incidents.stream()
        .anyMatch(i -> host.equals(i.host()) && incidentClass.equals(i.incidentClass()));
  }

  private static Incident only(
      List<Incident> incidents, String host, String incidentClass, boolean withVerdict) {
    List<Incident> found =
        incidents.stream()
            .filter(i -> host.equals(i.host()) && incidentClass.equals(i.incidentClass()))
            .filter(i -> (i.verdict() != null) == withVerdict)
            .toList();
    assertEquals(1, found.size(), host + " " + incidentClass + ": " + incidents);
    return found.get(0);
  }

  /** Reads {@code topic} until {@code done}; a job that failed meanwhile is the failure shown. */
  private static List<byte[]> await(JobClient job, String topic, Predicate<List<byte[]>> done)
      throws Exception {
    List<byte[]> got =
        TopicReader.readUntil(
            BROKER.bootstrapServers(),
            topic,
            done,
            Duration.ofSeconds(2),
            Duration.ofSeconds(60),
            true);
    if (!done.test(got)) {
      String why = job.getJobStatus().get().toString();
      if (job.getJobStatus().get().isGloballyTerminalState()) {
        try {
          job.getJobExecutionResult().get();
        } catch (Exception e) {
          why += ": " + e.getCause();
        }
      }
      throw new AssertionError(topic + " never got what was awaited; the job is " + why);
    }
    return got;
  }

  private static List<Incident> incidents(List<byte[]> values) {
    List<Incident> out = new ArrayList<>();
    for (byte[] b : values) {
      try {
        out.add(WireJson.readIncident(b));
      } catch (WireFormatException e) {
        throw new AssertionError(e);
      }
    }
    return out;
  }

  private static List<Alert> alerts(List<byte[]> values) {
    List<Alert> out = new ArrayList<>();
    for (byte[] b : values) {
      try {
        out.add(WireJson.readAlert(b));
      } catch (WireFormatException e) {
        throw new AssertionError(e);
      }
    }
    return out;
  }

  private static LogRecord.Builder record(
      String host, String job, Integer gpu, Integer rank, Instant t, String text) {
    return LogRecord.builder()
        .host(host)
        .job(job)
        .gpu(gpu)
        .rank(rank)
        .source("/logs/" + host + "-" + job + ".log")
        .offset(0)
        .eventTime(t)
        .text(text);
  }

  private static ProcessorSettings settings(String group) {
    return ProcessorSettings.builder()
        .kafka(new KafkaSettings(BROKER.bootstrapServers(), Map.of()))
        .groupId(group)
        .transactionalIdPrefix(group + "-" + System.nanoTime())
        .rules(List.of())
        .build();
  }

  private static JobClient startJob() throws Exception {
    Configuration conf = ProcessorMain.noGenericTypes();
    conf.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    ProcessorSettings s = settings("kryo-free");
    ProcessorMain.configure(env, s);
    assertTrue(env.getConfig().getSerializerConfig().hasGenericTypesDisabled());
    ProcessorMain.job(s).build(env);
    return env.executeAsync("kryo-free");
  }

  private static void produce(List<LogRecord> records, byte[]... junk) throws Exception {
    try (var p =
        new KafkaProducer<byte[], byte[]>(
            Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrapServers()),
            new ByteArraySerializer(),
            new ByteArraySerializer())) {
      for (LogRecord r : records) {
        p.send(
                new ProducerRecord<>(
                    Topics.LOGS,
                    r.streamKey().getBytes(StandardCharsets.UTF_8),
                    WireJson.toBytes(r)))
            .get();
      }
      for (byte[] j : junk) {
        p.send(new ProducerRecord<>(Topics.LOGS, null, j)).get();
      }
    }
  }
}
