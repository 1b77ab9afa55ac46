package dev.cudawatch.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.cudawatch.common.Topics;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.kafka.embedded.EmbeddedKafkaBroker;
import dev.cudawatch.launcher.LocalCluster;
import java.io.BufferedWriter;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.flink.core.execution.JobClient;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * End-to-end harness for the streaming pipeline (not a test: it measures).
 *
 * <pre>
 *   throughput DIR RECORDS   records already in Kafka -> Flink job (p=2) -> incidents, sustained
 *   latency DIR SECONDS RATE a line written to a log file -> its alert at /api/alerts, under RATE
 *                            lines/s of other output, with the whole `local` pipeline
 * </pre>
 */
public final class PipelineBench {
  private static final String OOM =
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total"
          + " capacity of 79.15 GiB of which 1.05 GiB is free.";

  private PipelineBench() {}

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[1]);
    switch (args[0]) {
      case "throughput" -> throughput(dir, Integer.parseInt(args[2]));
      case "latency" -> latency(dir, Integer.parseInt(args[2]), Integer.parseInt(args[3]));
      default -> throw new IllegalArgumentException("throughput | latency");
    }
    System.exit(0);
  }

  // ---- throughput ----------------------------------------------------------------------------

  /**
   * Each partition gets its own markers: a partition's marker is read after everything its source
   * subtask read before it, so a marker in one partition says nothing of the other's progress.
   */
  private static final int PARTITIONS = 2;

  /** Markers after every tenth of the records: tenth 0 is JIT warm-up and the first checkpoints. */
  private static final int TENTHS = 10;

  /**
   * Times the job by when it read marker lines, not when their incidents became visible: each
   * marker's incident carries the classifier's processing time (its flush timer, the same delay
   * after every marker), while visibility waits for the next checkpoint's commit (up to 1 s more)
   * and the first commit comes only after the job has already read records it would not count.
   * Beside each tenth's rate it prints how much CPU the whole JVM had: on a shared machine the
   * cores other processes take explain most of the spread between runs.
   */
  static void throughput(Path dir, int n) throws Exception {
    if (n < 100 * TENTHS) {
      throw new IllegalArgumentException("throughput needs at least " + 100 * TENTHS + " records");
    }
    try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start(dir.resolve("kafka"))) {
      broker.createTopics(Topics.ALL, PARTITIONS);
      long[] perPartition = new long[PARTITIONS];
      long bytes = preload(broker.bootstrapServers(), n, perPartition);
      long submitted = System.nanoTime();
      CpuSampler cpu = CpuSampler.start();
      JobClient job = BenchJob.start(broker.bootstrapServers(), "bench", null);
      Map<String, Marker> seen = awaitMarkers(broker.bootstrapServers(), Duration.ofMinutes(10));
      job.cancel().get();
      cpu.stop();
      // a tenth starts when the first partition reaches it and ends when the last one does, so
      // every record counted was read inside the window
      long[] from = new long[TENTHS + 1];
      long[] to = new long[TENTHS + 1];
      for (int k = 0; k <= TENTHS; k++) {
        from[k] = Long.MAX_VALUE;
        for (int p = 0; p < PARTITIONS; p++) {
          long t = seen.get(markerName(k, p)).detectedMillis();
          from[k] = Math.min(from[k], t);
          to[k] = Math.max(to[k], t);
        }
      }
      List<String> rates = new ArrayList<>();
      List<String> cores = new ArrayList<>();
      for (int k = 0; k < TENTHS; k++) {
        rates.add(String.format("%,.0f", n / (double) TENTHS / ((to[k + 1] - from[k]) / 1e3)));
        cores.add(String.format("%.2f", cpu.cores(from[k], to[k + 1])));
      }
      long steadyRecords = n - (long) n / TENTHS;
      double steadySecs = (to[TENTHS] - from[1]) / 1e3;
      double cpuSecs = cpu.seconds(from[1], to[TENTHS]);
      long firstVisible =
          seen.values().stream().mapToLong(Marker::visibleNanos).min().orElseThrow();
      long lastVisible = 0;
      for (int p = 0; p < PARTITIONS; p++) {
        lastVisible = Math.max(lastVisible, seen.get(markerName(TENTHS, p)).visibleNanos());
      }
      System.out.printf(
          "records between the markers: %,d (%,.1f MB of JSON), per partition %s%n"
              + "first marker's incident %.1f s after submission (job start + first checkpoint)%n"
              + "records/s in each tenth of the records: %s%n"
              + "cores this JVM used in each tenth (of %d): %s%n"
              + "whole run (JIT and first checkpoint included): %,.0f records/s%n"
              + "first commit to last commit (the window before perf-job4): %,.0f records/s%n"
              + "CPU in the sustained window: %.1f s in %.1f s (%.2f cores), %.1f us per record%n"
              + "sustained: %,.0f records/s (%,.1f MB/s) through Kafka -> Flink -> incidents,"
              + " the last nine tenths of the records, by when the job read the markers%n",
          n,
          bytes / 1e6,
          java.util.Arrays.toString(perPartition),
          (firstVisible - submitted) / 1e9,
          rates,
          Runtime.getRuntime().availableProcessors(),
          cores,
          n / ((to[TENTHS] - from[0]) / 1e3),
          n / ((lastVisible - firstVisible) / 1e9),
          cpuSecs,
          steadySecs,
          cpuSecs / steadySecs,
          cpuSecs * 1e6 / steadyRecords,
          steadyRecords / steadySecs,
          bytes * (TENTHS - 1) / TENTHS / 1e6 / steadySecs);
    }
  }

  /** A marker's incident: when the classifier flushed it (ms) and when it became visible (ns). */
  private record Marker(long detectedMillis, long visibleNanos) {}

  /** The host of the marker after tenth {@code k} in {@code partition} (k = 0: before any). */
  private static String markerName(int k, int partition) {
    return "marker-" + k + "-" + partition;
  }

  /**
   * The JVM's CPU time every 50 ms against the wall clock (the markers' times are the wall clock),
   * so the CPU of any window can be read afterwards.
   */
  private static final class CpuSampler {
    private final long[] wallMillis = new long[24_000]; // 20 min
    private final long[] cpuNanos = new long[wallMillis.length];
    private volatile int size;
    private volatile boolean running = true;
    private Thread thread;

    static CpuSampler start() {
      CpuSampler s = new CpuSampler();
      var os =
          (com.sun.management.OperatingSystemMXBean)
              java.lang.management.ManagementFactory.getOperatingSystemMXBean();
      s.thread =
          new Thread(
              () -> {
                while (s.running && s.size < s.wallMillis.length) {
                  s.wallMillis[s.size] = System.currentTimeMillis();
                  s.cpuNanos[s.size] = os.getProcessCpuTime();
                  s.size++;
                  try {
                    Thread.sleep(50);
                  } catch (InterruptedException e) {
                    return;
                  }
                }
              },
              "cpu-sampler");
      s.thread.setDaemon(true);
      s.thread.start();
      return s;
    }

    void stop() throws InterruptedException {
      running = false;
      thread.join();
    }

    /** CPU seconds between two wall-clock times, interpolated between samples. */
    double seconds(long fromMillis, long toMillis) {
      return (at(toMillis) - at(fromMillis)) / 1e9;
    }

    double cores(long fromMillis, long toMillis) {
      return seconds(fromMillis, toMillis) / ((toMillis - fromMillis) / 1e3);
    }

    private double at(long millis) {
      int i = 1;
      while (i < size - 1 && wallMillis[i] < millis) {
        i++;
      }
      long w0 = wallMillis[i - 1];
      long w1 = wallMillis[i];
      double f = w1 == w0 ? 0 : Math.max(0, Math.min(1, (millis - w0) / (double) (w1 - w0)));
      return cpuNanos[i - 1] + f * (cpuNanos[i] - cpuNanos[i - 1]);
    }
  }

  /**
   * {@code n} lines of 32 streams of training output, with a marker in each partition before them
   * and after each tenth of them.
   */
  private static long preload(String bootstrap, int n, long[] perPartition) throws Exception {
    List<String> lines = TrainingLogGenerator.lines(Math.min(n, 200_000), 50_000, 7);
    long bytes = 0;
    try (var p =
        new KafkaProducer<byte[], byte[]>(
            Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                bootstrap,
                ProducerConfig.LINGER_MS_CONFIG,
                20,
                ProducerConfig.BATCH_SIZE_CONFIG,
                512 * 1024,
                ProducerConfig.COMPRESSION_TYPE_CONFIG,
                "lz4"),
            new ByteArraySerializer(),
            new ByteArraySerializer())) {
      sendMarkers(p, 0);
      Instant t0 = Instant.parse("2026-11-22T03:00:00Z");
      for (int i = 0; i < n; i++) {
        if (i > 0 && i % (n / TENTHS) == 0 && i / (n / TENTHS) < TENTHS) {
          sendMarkers(p, i / (n / TENTHS));
        }
        int stream = i % 32;
        LogRecord r =
            LogRecord.builder()
                .host("node-" + stream / 8)
                .job("job-" + stream / 8)
                .rank(stream % 8)
                .source("/logs/rank-" + stream % 8 + ".log")
                .offset(i)
                .eventTime(t0.plusMillis(i / 10))
                .text(lines.get(i % lines.size()))
                .build();
        // Streams alternate over the partitions: by their keys' hash the 32 streams split 18 / 14,
        // and the lighter partition's source then idles for the last ~2 s (of ~14) of the run.
        int partition = stream % PARTITIONS;
        perPartition[partition]++;
        bytes += send(p, r, partition);
      }
      sendMarkers(p, TENTHS);
      p.flush();
    }
    return bytes;
  }

  private static void sendMarkers(KafkaProducer<byte[], byte[]> p, int tenth) {
    for (int partition = 0; partition < PARTITIONS; partition++) {
      send(p, marker(markerName(tenth, partition)), partition);
    }
  }

  private static LogRecord marker(String host) {
    return LogRecord.builder()
        .host(host)
        .job(host)
        .source("/logs/marker.log")
        .offset(0)
        .eventTime(Instant.now())
        .text(OOM)
        .build();
  }

  /** Sends {@code r} to {@code partition}, with its stream key as the record's key. */
  private static int send(KafkaProducer<byte[], byte[]> p, LogRecord r, int partition) {
    // the Object overload, the same bytes: bench/budget runs these classes against the base's jar,
    // which has no LogRecord overload
    byte[] v = WireJson.toBytes((Object) r);
    p.send(
        new ProducerRecord<>(
            Topics.LOGS, partition, r.streamKey().getBytes(StandardCharsets.UTF_8), v));
    return v.length;
  }

  /** Each marker's incident, by its host, once every one is visible. */
  private static Map<String, Marker> awaitMarkers(String bootstrap, Duration timeout)
      throws Exception {
    Map<String, Marker> seen = new ConcurrentHashMap<>();
    int expected = (TENTHS + 1) * PARTITIONS;
    try (var c =
        new KafkaConsumer<byte[], byte[]>(
            Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ConsumerConfig.GROUP_ID_CONFIG, "bench-watch",
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"),
            new ByteArrayDeserializer(),
            new ByteArrayDeserializer())) {
      c.subscribe(List.of(Topics.INCIDENTS));
      long deadline = System.nanoTime() + timeout.toNanos();
      while (seen.size() < expected && System.nanoTime() < deadline) {
        for (var rec : c.poll(Duration.ofMillis(50))) {
          Incident i = WireJson.readIncident(rec.value());
          if (i.host() != null && i.host().startsWith("marker-")) {
            seen.putIfAbsent(
                i.host(), new Marker(i.detectedTime().toEpochMilli(), System.nanoTime()));
          }
        }
      }
    }
    if (seen.size() < expected) {
      throw new IllegalStateException("only these markers arrived: " + seen.keySet());
    }
    return seen;
  }

  // ---- latency -------------------------------------------------------------------------------

  static void latency(Path dir, int seconds, int rate) throws Exception {
    Path logs = dir.resolve("logs");
    Files.createDirectories(logs);
    LocalCluster cluster =
        new LocalCluster(
            new LocalCluster.Options(
                dir.resolve("data"), logs, null, 0, 2, null, null, null, List.of()),
            new PrintStream(System.out, true, StandardCharsets.UTF_8));
    // generated before the clock starts: 100,000 lines cost the first probe ~0.2 s of CPU otherwise
    List<String> backgroundLines = TrainingLogGenerator.lines(100_000, Integer.MAX_VALUE, 3);
    cluster.start();
    AtomicBoolean running = new AtomicBoolean(true);
    Map<Integer, Long> written = new ConcurrentHashMap<>();
    Map<Integer, Long> visible = new ConcurrentHashMap<>();
    // the observers are ready before the first probe: their own start (four consumers, an HTTP
    // client) is not the pipeline's first-incident time
    CountDownLatch observing = new CountDownLatch(2);
    Thread watcher =
        new Thread(
            () -> watch(cluster.httpPort(), written, visible, running, observing), "watcher");
    watcher.start();
    // each probe's first sighting in each stage, read from Kafka beside the pipeline
    Map<String, Map<Integer, Long>> stages = new ConcurrentHashMap<>();
    Thread tracer =
        new Thread(
            () -> trace(cluster.bootstrapServers(), stages, running, observing), "stage-tracer");
    tracer.start();
    if (!observing.await(60, java.util.concurrent.TimeUnit.SECONDS)) {
      throw new IllegalStateException("the tracer and the API watcher did not start");
    }
    Thread background =
        new Thread(() -> background(logs, rate, backgroundLines, running), "background");
    background.start();
    // Warm-up: the first probes also pay for the job starting and JIT compilation; 30 of them,
    // a second apart, are not counted (they are numbered below zero). -Dbench.warmup=3 makes a
    // run that only measures the first incident after start short.
    int warmup = Integer.getInteger("bench.warmup", 30);
    // each probe is a new job's log failing: one file, one incident, one alert
    int probes = seconds;
    for (int i = -warmup; i < probes; i++) {
      Path probe = logs.resolve("probe-" + i + ".log");
      written.put(i, System.nanoTime());
      Files.writeString(probe, OOM + "\n");
      Thread.sleep(1000);
    }
    Thread.sleep(5_000);
    running.set(false);
    background.join();
    watcher.join();
    tracer.join();
    cluster.close();
    printStages(written, visible, stages);
    long[] ms =
        written.keySet().stream()
            .filter(k -> k >= 0 && visible.containsKey(k))
            .mapToLong(k -> (visible.get(k) - written.get(k)) / 1_000_000)
            .sorted()
            .toArray();
    for (var e : new java.util.TreeMap<>(written).tailMap(0).entrySet()) {
      Long v = visible.get(e.getKey());
      if (v == null || (v - e.getValue()) / 1_000_000 > 1000) {
        System.out.printf(
            "slow probe %d: %s%n",
            e.getKey(), v == null ? "never" : (v - e.getValue()) / 1_000_000 + " ms");
      }
    }
    if (ms.length == 0) {
      System.out.printf(
          "probes: %d written, no alert seen, background %,d lines/s%n", probes, rate);
      return;
    }
    System.out.printf(
        "probes: %d written, %d alerts seen, background %,d lines/s%n"
            + "latency line written -> alert at /api/alerts: p50 %d ms, p90 %d ms, p99 %d ms, max %d"
            + " ms%n",
        probes, ms.length, rate, pct(ms, 50), pct(ms, 90), pct(ms, 99), ms[ms.length - 1]);
  }

  private static long pct(long[] sorted, int p) {
    return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p / 100.0 * sorted.length) - 1)];
  }

  /** {@code rate} lines/s of healthy training output over 8 files, in 10 ms slices. */
  private static void background(Path logs, int rate, List<String> lines, AtomicBoolean running) {
    List<BufferedWriter> ws = new ArrayList<>();
    try {
      for (int f = 0; f < 8; f++) {
        ws.add(Files.newBufferedWriter(logs.resolve("rank-" + f + ".log")));
      }
      long start = System.nanoTime();
      long sent = 0;
      int i = 0;
      while (running.get()) {
        long due = (System.nanoTime() - start) * rate / 1_000_000_000L;
        for (; sent < due; sent++, i++) {
          ws.get(i % 8).write(lines.get(i % lines.size()) + "\n");
        }
        for (BufferedWriter w : ws) {
          w.flush();
        }
        Thread.sleep(10);
      }
      for (BufferedWriter w : ws) {
        w.close();
      }
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** The stages a probe line passes, in order, as the tracer names them. */
  private static final List<String> STAGES =
      List.of("logs", "quiet", "incident-written", "incident-committed", "alert-committed");

  /**
   * Notes when each probe first appears in each stage: its log record in the logs topic (the agent
   * read and shipped it), its incident in the incidents topic uncommitted (Flink classified it and
   * the sink wrote it inside a transaction) and committed (the checkpoint completed), and its alert
   * in the alerts topic committed (the alerts service consumed the incident).
   */
  private static void trace(
      String bootstrap,
      Map<String, Map<Integer, Long>> stages,
      AtomicBoolean running,
      CountDownLatch ready) {
    List<KafkaConsumer<byte[], byte[]>> cs = new ArrayList<>();
    List<String> names = new ArrayList<>();
    String[][] plan = {
      {Topics.LOGS, "read_uncommitted", "logs"},
      {Topics.INCIDENTS, "read_uncommitted", "incident-written"},
      {Topics.INCIDENTS, "read_committed", "incident-committed"},
      {Topics.ALERTS, "read_committed", "alert-committed"}
    };
    for (String[] p : plan) {
      Map<String, Object> c = new java.util.HashMap<>();
      c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
      c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, p[1]);
      c.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 100);
      c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
      c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
      KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(c);
      var parts =
          consumer.partitionsFor(p[0]).stream()
              .map(i -> new org.apache.kafka.common.TopicPartition(p[0], i.partition()))
              .toList();
      consumer.assign(parts);
      consumer.seekToEnd(parts);
      consumer.poll(Duration.ofMillis(1)); // resolves the end positions before any probe
      cs.add(consumer);
      names.add(p[2]);
    }
    ready.countDown();
    // One thread per stage, each parked in a long poll: the broker answers a fetch as soon as
    // records (or a commit) arrive, so the wait costs no resolution, and the observers do not
    // load the 2-core machine that they measure (four 5 ms polling loops did).
    List<Thread> readers = new ArrayList<>();
    for (int k = 0; k < cs.size(); k++) {
      KafkaConsumer<byte[], byte[]> consumer = cs.get(k);
      String name = names.get(k);
      Thread t =
          new Thread(
              () -> {
                try {
                  while (running.get()) {
                    for (var rec : consumer.poll(Duration.ofMillis(100))) {
                      note(rec.value(), name, System.nanoTime(), stages);
                    }
                  }
                } finally {
                  consumer.close();
                }
              },
              "stage-" + name);
      t.start();
      readers.add(t);
    }
    for (Thread t : readers) {
      try {
        t.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  /** Notes the first sighting of each probe that a record of {@code stage} names. */
  private static void note(
      byte[] value, String stage, long now, Map<String, Map<Integer, Long>> stages) {
    String v = new String(value, StandardCharsets.UTF_8);
    // the agent's quiet marker behind a probe's line is a stage of its own
    if (stage.equals("logs") && v.contains("\"QUIET\"")) {
      stage = "quiet";
    }
    int dash = v.indexOf("probe-");
    while (dash >= 0) {
      int end = v.indexOf(".log", dash);
      if (end > dash + 6) {
        try {
          int probe = Integer.parseInt(v.substring(dash + 6, end));
          stages.computeIfAbsent(stage, x -> new ConcurrentHashMap<>()).putIfAbsent(probe, now);
        } catch (NumberFormatException ignored) {
          // another file's name
        }
      }
      dash = v.indexOf("probe-", dash + 6);
    }
  }

  /**
   * Prints where a probe's time goes: each stage's median and p99 since the line was written, one
   * probe's whole trace, and the first probe's latency (written as soon as the pipeline started).
   */
  /** One probe's time to each stage. */
  private static String trace(
      int probe, Map<Integer, Long> written, Map<String, Map<Integer, Long>> stages) {
    StringBuilder t = new StringBuilder("trace of probe " + probe + " (ms since written):");
    for (var e : stages.entrySet()) {
      Long v = e.getValue().get(probe);
      t.append(' ')
          .append(e.getKey())
          .append(' ')
          .append(v == null ? "-" : String.valueOf((v - written.get(probe)) / 1_000_000));
    }
    return t.toString();
  }

  private static void printStages(
      Map<Integer, Long> written, Map<Integer, Long> visible, Map<String, Map<Integer, Long>> st) {
    Map<String, Map<Integer, Long>> all = new java.util.LinkedHashMap<>();
    for (String s : STAGES) {
      all.put(s, st.getOrDefault(s, Map.of()));
    }
    all.put("api", visible);
    StringBuilder line = new StringBuilder("stages since written (p50/p99 ms):");
    for (var e : all.entrySet()) {
      long[] ms =
          written.keySet().stream()
              .filter(k -> k >= 0 && e.getValue().containsKey(k))
              .mapToLong(k -> (e.getValue().get(k) - written.get(k)) / 1_000_000)
              .sorted()
              .toArray();
      line.append(' ')
          .append(e.getKey())
          .append(' ')
          .append(ms.length == 0 ? "-" : pct(ms, 50) + "/" + pct(ms, 99));
    }
    System.out.println(line);
    int one =
        written.keySet().stream()
            .filter(k -> k >= 0)
            .sorted()
            .skip(written.size() / 4)
            .findFirst()
            .orElse(0);
    System.out.println(trace(one, written, all));
    int first = written.keySet().stream().min(Integer::compare).orElse(0);
    System.out.println(trace(first, written, all) + " (the first probe)");
    Long f = visible.get(first);
    System.out.println(
        "first incident after start: "
            + (f == null ? "never" : (f - written.get(first)) / 1_000_000 + " ms")
            + " (probe written as soon as local started)");
  }

  /** Polls /api/alerts every 10 ms; notes when each probe line's alert first appears. */
  private static void watch(
      int port,
      Map<Integer, Long> written,
      Map<Integer, Long> visible,
      AtomicBoolean running,
      CountDownLatch ready) {
    HttpClient http = HttpClient.newHttpClient();
    ObjectMapper json = new ObjectMapper();
    HttpRequest req =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/alerts")).build();
    while (running.get()) {
      try {
        JsonNode alerts =
            json.readTree(http.send(req, HttpResponse.BodyHandlers.ofString()).body());
        long now = System.nanoTime();
        ready.countDown(); // the API answered once: later sightings are the pipeline's time
        for (JsonNode a : alerts.path("alerts")) {
          String src = a.path("annotations").path("source").asText("");
          int colon = src.lastIndexOf(':');
          int dash = src.lastIndexOf("probe-");
          if (dash >= 0 && colon > dash) {
            int probe = Integer.parseInt(src.substring(dash + 6, src.indexOf(".log", dash)));
            if (written.containsKey(probe)) {
              visible.putIfAbsent(probe, now);
            }
          }
        }
        Thread.sleep(10);
      } catch (Exception e) {
        if (running.get()) {
          System.err.println("watch: " + e);
        }
      }
    }
  }
}
