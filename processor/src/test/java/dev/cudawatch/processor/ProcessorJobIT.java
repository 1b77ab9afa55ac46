package dev.cudawatch.processor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.Topics;
import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.common.gpu.MemorySample;
import dev.cudawatch.common.gpu.NvidiaSmiCsv;
import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.DeadLetter;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
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
import org.junit.jupiter.api.io.TempDir;

/** The job on a real MiniCluster (parallelism 2) against a real broker: lines in, incidents out. */
class ProcessorJobIT {
  @RegisterExtension
  static final MiniClusterExtension FLINK =
      new MiniClusterExtension(
          new MiniClusterResourceConfiguration.Builder()
              .setNumberTaskManagers(1)
              .setNumberSlotsPerTaskManager(2)
              .build());

  @TempDir static Path dir;

  @RegisterExtension
  static final KafkaBrokerExtension BROKER = new KafkaBrokerExtension(Topics.ALL, 2);

  @Test
  void theRealOomTracebackBecomesAnIncidentAndAnAlertExactlyOnce() throws Exception {
    List<String> lines =
        Files.readAllLines(Path.of("../diagnosis/src/test/resources/golden/oom_single.log"));
    List<LogRecord> records = new ArrayList<>();
    long offset = 0;
    for (String l : lines) {
      LogRecord r =
          LogRecord.builder()
              .host("node-9")
              .job("j1")
              .source("/logs/oom.log")
              .offset(offset)
              .eventTime(Instant.now())
              .text(l)
              .build();
      offset += l.length() + 1;
      records.add(r);
    }
    produce(records, "{broken".getBytes(StandardCharsets.UTF_8));
    JobClient job = startJob("cudawatch-processor");
    try {
      List<Incident> incidents = new ArrayList<>();
      for (byte[] b : readCommitted(Topics.INCIDENTS, 1)) {
        Incident i = WireJson.readIncident(b);
        if ("node-9".equals(i.host())) { // the topics are shared with the other test
          incidents.add(i);
        }
      }
      assertEquals(1, incidents.size());
      Incident i = incidents.get(0);
      assertEquals("cuda_oom", i.incidentClass());
      assertEquals("node-9", i.host());
      assertEquals(214748364800L, i.fields().get("tried_to_allocate_bytes"));
      Alert a =
          readCommitted(Topics.ALERTS, 1).stream()
              .map(ProcessorJobIT::alert)
              .filter(x -> "node-9".equals(x.labels().get("host")))
              .findFirst()
              .orElseThrow();
      assertEquals("cuda_oom", a.labels().get("class"));
      DeadLetter d = WireJson.read(readCommitted(Topics.DEAD_LETTER, 1).get(0), DeadLetter.class);
      assertTrue(d.reason().startsWith("not JSON"), d.reason());
    } finally {
      job.cancel().get();
    }
  }

  @Test
  void threeIllegalAccessesOnOneGpuRaiseTheRepeatedFailureAlert() throws Exception {
    List<LogRecord> records = new ArrayList<>();
    Instant t0 = Instant.parse("2026-11-22T03:00:00Z");
    for (int job = 0; job < 3; job++) {
      LogRecord r =
          LogRecord.builder()
              .host("node-7")
              .job("job-" + job)
              .gpu(2)
              .source("/logs/job-" + job + ".log")
              .offset(0)
              .eventTime(t0.plusSeconds(60L * job))
              .text("RuntimeError: CUDA error: an illegal memory access was encountered")
              .build();
      records.add(r);
    }
    produce(records);
    JobClient job = startJob("rules-it");
    try {
      List<Alert> repeated = new ArrayList<>();
      for (byte[] b :
          TopicReader.readAll(
              BROKER.bootstrapServers(),
              Topics.ALERTS,
              4,
              Duration.ofSeconds(5),
              Duration.ofSeconds(40),
              true)) {
        Alert a = WireJson.readAlert(b);
        if (a.alertName().equals("RepeatedIllegalMemoryAccess")) {
          repeated.add(a);
        }
      }
      assertEquals(1, repeated.size(), "fired once, exactly once in the topic");
      assertEquals("node-7", repeated.get(0).labels().get("host"));
      assertEquals("2", repeated.get(0).labels().get("gpu"));
      assertEquals(Alert.State.FIRING, repeated.get(0).state());
    } finally {
      job.cancel().get();
    }
  }

  /**
   * Nodes whose clocks are a year off cannot mute the repeated-failure rule for the others. One
   * node's producer stamps its records a year ahead too (a reset RTC under the agent), one ships
   * lines a year ahead with honest Kafka times (a bad shipper timestamp), one is a year behind.
   * Their incidents reach the job first, so before the clamp the watermark was a year ahead when
   * the steady nodes' incidents came, and CountRule dropped them all as late. The logs topic stamps
   * records with the broker's clock, which the job clamps event times to: under faketime everything
   * moves together.
   */
  @Test
  void nodesAYearAheadOrBehindCannotMuteTheRepeatedFailureRuleForTheOthers() throws Exception {
    Instant base =
        Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS).minusSeconds(90);
    Duration year = Duration.ofDays(365);
    String illegal = "RuntimeError: CUDA error: an illegal memory access was encountered";
    List<ProducerRecord<byte[], byte[]>> skewed = new ArrayList<>();
    for (int k = 0; k < 4; k++) {
      Instant t = base.plus(year).plusSeconds(20L * k);
      // its producer's clock is a year ahead too: the logs topic takes the broker's time
      // (LogAppendTime), so the broker neither refuses the record nor trusts that time
      skewed.add(timed(line("ahead-clock", "ja-" + k, 2, t, illegal).build(), t));
      skewed.add(timed(line("ahead-text", "jt-" + k, 2, t, illegal).build(), base.plusSeconds(k)));
      Instant b = base.minus(year).plusSeconds(20L * k);
      skewed.add(timed(line("behind", "jb-" + k, 2, b, illegal).build(), b));
    }
    List<ProducerRecord<byte[], byte[]>> steady = new ArrayList<>();
    for (int k = 0; k < 3; k++) {
      Instant t = base.plusSeconds(20L * k);
      for (String host : List.of("steady-1", "steady-2")) {
        steady.add(timed(line(host, "js-" + k, 1, t, illegal).build(), t));
      }
    }
    send(skewed);
    JobClient job = startJob("clock-skew-it");
    try {
      java.util.Set<String> skewedHosts = java.util.Set.of("ahead-clock", "ahead-text", "behind");
      // the skewed nodes' incidents are out: the watermark has seen their times
      List<Incident> early = new ArrayList<>();
      for (byte[] b :
          TopicReader.readUntil(
              BROKER.bootstrapServers(),
              Topics.INCIDENTS,
              got -> hostsOf(got).stream().filter(skewedHosts::contains).count() == 12,
              Duration.ofSeconds(2),
              Duration.ofSeconds(90),
              true)) {
        Incident i = WireJson.readIncident(b);
        if (skewedHosts.contains(i.host())) {
          early.add(i);
        }
      }
      assertEquals(12, early.size(), "every skewed node's incident: " + early);
      Instant horizon = Instant.now().plus(Duration.ofDays(1));
      for (Incident i : early) {
        assertTrue(
            i.eventTime().isBefore(horizon),
            i.host() + ": no incident time a year ahead, got " + i.eventTime());
      }
      send(steady);
      java.util.Set<String> wanted = java.util.Set.of("steady-1", "steady-2");
      Map<String, Alert> fired = new java.util.TreeMap<>();
      for (byte[] b :
          TopicReader.readUntil(
              BROKER.bootstrapServers(),
              Topics.ALERTS,
              got -> repeatedHosts(got).containsAll(wanted),
              Duration.ofSeconds(3),
              Duration.ofSeconds(90),
              true)) {
        Alert a = WireJson.readAlert(b);
        if (a.alertName().equals("RepeatedIllegalMemoryAccess")
            && a.state() == Alert.State.FIRING) {
          fired.put(a.labels().get("host"), a);
        }
      }
      assertTrue(fired.keySet().containsAll(wanted), "the steady nodes still alert: " + fired);
      assertTrue(
          fired.keySet().containsAll(java.util.Set.of("ahead-clock", "ahead-text")),
          "a node ahead alerts too, at the time its lines reached Kafka: " + fired.keySet());
      for (Alert a : fired.values()) {
        assertTrue(
            a.startsAt().isBefore(horizon), a.labels().get("host") + " starts " + a.startsAt());
      }
    } finally {
      job.cancel().get();
    }
  }

  private static List<String> hostsOf(List<byte[]> incidents) {
    List<String> hosts = new ArrayList<>();
    for (byte[] b : incidents) {
      try {
        hosts.add(WireJson.readIncident(b).host());
      } catch (dev.cudawatch.common.wire.WireFormatException e) {
        throw new AssertionError(e);
      }
    }
    return hosts;
  }

  private static java.util.Set<String> repeatedHosts(List<byte[]> alerts) {
    java.util.Set<String> hosts = new java.util.HashSet<>();
    for (byte[] b : alerts) {
      Alert a = alert(b);
      if (a.alertName().equals("RepeatedIllegalMemoryAccess")) {
        hosts.add(a.labels().get("host"));
      }
    }
    return hosts;
  }

  /** A record as a producer with this clock sends it: Kafka's timestamp is {@code createTime}. */
  private static ProducerRecord<byte[], byte[]> timed(LogRecord r, Instant createTime) {
    return new ProducerRecord<>(
        Topics.LOGS,
        null,
        createTime.toEpochMilli(),
        r.streamKey().getBytes(StandardCharsets.UTF_8),
        WireJson.toBytes(r));
  }

  private static void send(List<ProducerRecord<byte[], byte[]>> records) throws Exception {
    try (var p =
        new KafkaProducer<byte[], byte[]>(
            Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrapServers()),
            new ByteArraySerializer(),
            new ByteArraySerializer())) {
      for (ProducerRecord<byte[], byte[]> r : records) {
        p.send(r).get();
      }
    }
  }

  @Test
  void theRealLeakIsWarnedAboutBeforeTheCardIsFull() throws Exception {
    List<String> rows =
        Files.readAllLines(
            Path.of("../diagnosis/src/test/resources/golden/nvidia_smi_during_leak.csv"));
    NvidiaSmiCsv csv = NvidiaSmiCsv.fromHeader(rows.get(0), java.time.ZoneOffset.UTC).orElseThrow();
    long fullAt = Long.MAX_VALUE;
    List<LogRecord> records = new ArrayList<>();
    long offset = 0;
    for (String row : rows.subList(1, rows.size())) {
      MemorySample s = csv.parse(row).orElseThrow();
      if (s.usedBytes() >= s.totalBytes() * 99 / 100) {
        fullAt = Math.min(fullAt, s.epochMillis());
      }
      LogRecord r =
          LogRecord.builder().host("leak-host").kind(RecordKind.GPU_MEMORY).stream("nvidia-smi")
              .source("nvidia-smi")
              .offset(offset++)
              .eventTime(Instant.ofEpochMilli(s.epochMillis()))
              .text(NvidiaSmiCsv.toAgentRow(s))
              .build();
      records.add(r);
    }
    produce(records);
    JobClient job = startJob("leak-it");
    try {
      List<Incident> leaks = new ArrayList<>();
      for (byte[] b :
          TopicReader.readAll(
              BROKER.bootstrapServers(),
              Topics.INCIDENTS,
              1,
              Duration.ofSeconds(3),
              Duration.ofSeconds(60),
              true)) {
        Incident i = WireJson.readIncident(b);
        if ("leak-host".equals(i.host()) && i.incidentClass().equals("memory_leak")) {
          leaks.add(i);
        }
      }
      assertEquals(1, leaks.size(), "one warning per GPU, not one per sample");
      Incident leak = leaks.get(0);
      long warnedAt = leak.eventTime().toEpochMilli();
      assertTrue(
          fullAt - warnedAt >= 30_000,
          "warned " + (fullAt - warnedAt) / 1000 + " s before the card was full");
      assertTrue(((Number) leak.fields().get("predicted_seconds_to_full")).longValue() > 0);
      assertEquals("0000:00:06", leak.fields().get("pci"));
    } finally {
      job.cancel().get();
    }
  }

  @Test
  void fleetRulesAndVerdicts() throws Exception {
    Path site = dir.resolve("site-rules.yaml");
    Files.writeString(
        site,
        """
        rules:
          - name: FleetErrorSpike
            type: spike
            classes: [launch_config_error]
            key: [class]
            window_seconds: 300
            baseline_seconds: 3600
            factor: 2
            threshold: 3
          - name: JobSilentAfterError
            type: silence
            classes: [nccl_timeout]
            key: [host, job]
            for_seconds: 2
        """);
    Instant t0 = Instant.now();
    List<LogRecord> records = new ArrayList<>();
    String illegal = "RuntimeError: CUDA error: an illegal memory access was encountered";
    // two different jobs fault on GPU 5 of one host: a lemon GPU
    records.add(line("lemon-host", "job-a", 5, t0, illegal).build());
    records.add(line("lemon-host", "job-b", 5, t0.plusSeconds(60), illegal).build());
    // one line of code asserts on two hosts: a code bug
    for (String host : List.of("cb-1", "cb-2")) {
      String[] tb = {
        "Traceback (most recent call last):",
        "  File \"/srv/train.py\", line 88, in <module>",
        "    loss = model(x)",
        "RuntimeError: CUDA error: device-side assert triggered"
      };
      for (int k = 0; k < tb.length; k++) {
        records.add(line(host, "job-" + host, 0, t0.plusMillis(k), tb[k]).offset(k).build());
      }
    }
    // the application faults beside Xid 13 on its GPU: the application's fault
    records.add(line("xid-host", "job-x", 1, t0, illegal).build());
    records.add(
        line(
                "xid-host",
                null,
                1,
                t0.plusSeconds(1),
                "NVRM: Xid (PCI:0000:3b:00): 13, pid=674, name=python3, Graphics Exception: ESR 0x5041b0=0x3f20")
            .kind(RecordKind.KERNEL)
            .source("/dev/kmsg")
            .build());
    // a launch failure three times in a minute across the fleet: a spike against no baseline
    for (int k = 0; k < 3; k++) {
      records.add(
          line(
                  "spike-" + k,
                  "job-s" + k,
                  0,
                  t0.plusSeconds(k),
                  "RuntimeError: CUDA error: invalid configuration argument")
              .build());
    }
    // one job times out in a collective and hangs; another times out and exits
    String timeout =
        "[rank0]:[E1122 03:00:00.000000 1 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught"
            + " collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1,"
            + " NumelOut=1, Timeout(ms)=600000) ran for 600042 milliseconds before timing out.";
    records.add(line("hang-host", "hang-job", 0, t0, timeout).build());
    records.add(line("exit-host", "exit-job", 0, t0, timeout).build());
    records.add(
        line("exit-host", "exit-job", 0, t0.plusMillis(5), "finished with exit_code=1")
            .kind(RecordKind.EXIT)
            .stream("exit")
            .build());
    produce(records);
    JobClient job = startJob("fleet-it", site.toString());
    try {
      Map<String, List<Alert>> byName = new java.util.TreeMap<>();
      java.util.Set<String> wanted =
          java.util.Set.of("LemonGpu", "CodeBug", "FleetErrorSpike", "JobSilentAfterError");
      for (byte[] b :
          TopicReader.readUntil(
              BROKER.bootstrapServers(),
              Topics.ALERTS,
              got ->
                  got.stream()
                      .map(ProcessorJobIT::alert)
                      .map(Alert::alertName)
                      .collect(java.util.stream.Collectors.toSet())
                      .containsAll(wanted),
              Duration.ofSeconds(4),
              Duration.ofSeconds(60),
              true)) {
        Alert a = WireJson.readAlert(b);
        byName.computeIfAbsent(a.alertName(), k -> new ArrayList<>()).add(a);
      }
      Alert lemon = only(byName, "LemonGpu", "lemon-host");
      assertEquals("5", lemon.labels().get("gpu"));
      assertEquals("2", lemon.annotations().get("value"), "the lemon score: jobs failed by it");
      Alert bug = only(byName, "CodeBug", null);
      assertEquals("/srv/train.py:88", bug.labels().get("user_frame"));
      Alert spike = only(byName, "FleetErrorSpike", null);
      assertEquals("launch_config_error", spike.labels().get("class"));
      Alert hang = only(byName, "JobSilentAfterError", null);
      assertEquals("hang-job", hang.labels().get("job"), "the job that exited is not hung");

      Incident faulted = null;
      for (byte[] b : readCommitted(Topics.INCIDENTS, 1)) {
        Incident i = WireJson.readIncident(b);
        if ("xid-host".equals(i.host()) && i.verdict() != null) {
          faulted = i;
        }
      }
      assertTrue(faulted != null, "the illegal access came back with a verdict");
      assertEquals("illegal_memory_access", faulted.incidentClass());
      assertEquals("application_fault", faulted.verdict());
    } finally {
      job.cancel().get();
    }
  }

  private static Alert only(Map<String, List<Alert>> byName, String name, String host) {
    List<Alert> found =
        byName.getOrDefault(name, List.of()).stream()
            .filter(a -> host == null || host.equals(a.labels().get("host")))
            .filter(a -> a.state() == Alert.State.FIRING)
            .toList();
    assertEquals(1, found.size(), name + " fired once: " + byName.keySet());
    return found.get(0);
  }

  private static LogRecord.Builder line(String host, String job, int gpu, Instant t, String text) {
    return LogRecord.builder()
        .host(host)
        .job(job)
        .gpu(gpu)
        .source("/logs/" + host + "-" + job + ".log")
        .offset(0)
        .eventTime(t)
        .text(text);
  }

  /** Starts the job on the MiniCluster against the BROKER.broker(), as its own consumer group. */
  private static JobClient startJob(String group, String... siteRules) throws Exception {
    ProcessorSettings s =
        ProcessorSettings.builder()
            .kafka(new KafkaSettings(BROKER.bootstrapServers(), Map.of()))
            .groupId(group)
            .transactionalIdPrefix(group + "-" + System.nanoTime())
            .rules(List.of(siteRules))
            .build();
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    ProcessorMain.configure(env, s);
    ProcessorMain.job(s).build(env);
    return env.executeAsync(group);
  }

  /** Writes records to the logs topic as the agent would (keyed by stream), then any junk. */
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

  private static Alert alert(byte[] b) {
    try {
      return WireJson.readAlert(b);
    } catch (dev.cudawatch.common.wire.WireFormatException e) {
      throw new AssertionError(e);
    }
  }

  private static List<byte[]> readCommitted(String topic, int expect) {
    // a little longer than needed, to catch a duplicate
    return TopicReader.readAll(
        BROKER.bootstrapServers(),
        topic,
        expect,
        Duration.ofSeconds(3),
        Duration.ofSeconds(60),
        true);
  }
}
