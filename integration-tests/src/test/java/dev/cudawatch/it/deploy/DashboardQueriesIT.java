package dev.cudawatch.it.deploy;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import dev.cudawatch.alerts.RealBinaries;
import dev.cudawatch.alerts.RealPrometheus;
import dev.cudawatch.common.Topics;
import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.ingest.Agent;
import dev.cudawatch.ingest.AgentRuntime;
import dev.cudawatch.ingest.AgentSettings;
import dev.cudawatch.ingest.ship.Shipper;
import dev.cudawatch.launcher.LocalCluster;
import dev.cudawatch.testkit.Await;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every PromQL expression of every Grafana dashboard, run against a real Prometheus (Debian's
 * package) that scrapes the real alerts service of the embedded pipeline while an agent replays the
 * real corpus logs through it: each must return data.
 */
class DashboardQueriesIT {
  @TempDir Path dir;
  private final HttpClient http = HttpClient.newHttpClient();

  @Test
  void everyPanelQueryReturnsData() throws Exception {
    Map<String, String> queries = panelQueries();
    int alertsPort = RealBinaries.freePort();
    int agentPort = RealBinaries.freePort();
    int flinkPort = RealBinaries.freePort();
    HttpServer webhook = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    webhook.createContext(
        "/hook",
        ex -> {
          ex.getRequestBody().readAllBytes();
          ex.sendResponseHeaders(200, -1);
          ex.close();
        });
    webhook.start();
    RealPrometheus prom =
        RealPrometheus.start(
            dir,
            Map.of(
                "cudawatch-alerts", alertsPort, "cudawatch-agents", agentPort, "flink", flinkPort));
    String promUrl = prom.url();
    try (LocalCluster cluster =
            new LocalCluster(
                    new LocalCluster.Options(
                        dir.resolve("data"),
                        dir.resolve("logs"),
                        null,
                        alertsPort,
                        2,
                        null,
                        "http://127.0.0.1:" + webhook.getAddress().getPort() + "/hook",
                        null,
                        List.of()),
                    new PrintStream(java.io.OutputStream.nullOutputStream()))
                // the Prometheus reporter of deploy/flink/config.yaml, on the job's MiniCluster
                .withFlinkSetting(
                    "metrics.reporter.prom.factory.class",
                    "org.apache.flink.metrics.prometheus.PrometheusReporterFactory")
                .withFlinkSetting("metrics.reporter.prom.port", String.valueOf(flinkPort));
        AgentOnNode agent = new AgentOnNode()) {
      cluster.start();
      agent.start(cluster.bootstrapServers(), agentPort);
      // Prometheus must see the counters rise, so it scrapes before anything arrives
      await(() -> !query(promUrl, "up{job=\"cudawatch-alerts\"} == 1").isEmpty(), prom, "up");
      feed(cluster.bootstrapServers());
      Map<String, String> missing = new LinkedHashMap<>(queries);
      Await.until(
          "every panel to have data (those still without)",
          () -> {
            assertTrue(prom.isAlive(), "prometheus exited");
            missing.entrySet().removeIf(e -> hasData(query(promUrl, e.getValue())));
            return missing.keySet();
          },
          java.util.Set::isEmpty,
          java.time.Duration.ofSeconds(180));
      // the Flink metric names as Prometheus sees them, for docs/alerts.md's table
      List<String> flinkNames = names(promUrl, "flink");
      Files.writeString(Path.of("target", "flink-metric-names.txt"), String.join("\n", flinkNames));
      // the job's build, as docs/alerts.md's table names it
      assertTrue(
          flinkNames.contains(
              "flink_taskmanager_job_task_operator_version_revision_cudawatch_build_info"),
          "no build_info among the Flink metrics: " + flinkNames);
      // the job's JVM and process series are Flink's own (its reporter has no jvm_/process_)
      for (String jvm :
          List.of(
              "flink_taskmanager_Status_JVM_Memory_Heap_Used",
              "flink_taskmanager_Status_JVM_CPU_Time",
              "flink_jobmanager_Status_JVM_Memory_Heap_Used")) {
        assertTrue(flinkNames.contains(jvm), jvm + " not among the Flink metrics: " + flinkNames);
      }
      // the agent's and the alerts service's /metrics carry the JVM's and the process's series
      for (String job : List.of("cudawatch-alerts", "cudawatch-agents")) {
        for (String series : List.of("jvm_memory_used_bytes", "process_cpu_seconds_total")) {
          assertTrue(
              hasData(query(promUrl, series + "{job=\"" + job + "\"}")), job + ": " + series);
        }
      }
    } finally {
      prom.close();
      webhook.stop(0);
    }
  }

  /**
   * A real agent runtime on this "node": its /metrics scraped, GPU memory sampled from an
   * nvidia-smi stand-in printing what nvidia-smi prints (two GPUs), records shipped to the broker.
   */
  private final class AgentOnNode implements AutoCloseable {
    private AgentRuntime runtime;

    void start(String bootstrap, int port) throws Exception {
      Path smi = dir.resolve("nvidia-smi");
      Files.writeString(
          smi,
          "#!/bin/sh\n"
              + "case \"$*\" in\n"
              + "  *-lms*) while true; do\n"
              + "    t=$(date -u '+%Y/%m/%d %H:%M:%S.000')\n"
              + "    echo \"$t, 0, 00000000:3B:00.0, 40960, 81559\"\n"
              + "    echo \"$t, 1, 00000000:86:00.0, 1024, 81559\"\n"
              + "    sleep 0.5\n  done ;;\n"
              + "  *index,pci.bus_id*) printf '0, 00000000:3B:00.0\\n1, 00000000:86:00.0\\n' ;;\n"
              + "esac\n");
      smi.toFile().setExecutable(true);
      Path kernel = dir.resolve("kern.log");
      Files.writeString(kernel, "");
      AgentSettings s =
          AgentSettings.builder()
              .kafka(new KafkaSettings(bootstrap, Map.of()))
              .globs(List.of())
              .stateDir(dir.resolve("agent-state").toString())
              .host("node-9")
              .nvidiaSmi(smi.toString())
              .kernelLog(kernel.toString())
              .gpuSampleIntervalMs(500L)
              .httpPort(port)
              .build();
      runtime = new AgentRuntime(s, Clock.systemUTC());
      runtime.start(false);
    }

    @Override
    public void close() throws java.io.IOException {
      if (runtime != null) {
        runtime.close();
      }
    }
  }

  /** The metric names of one scrape job. */
  private List<String> names(String promUrl, String job) {
    List<String> out = new ArrayList<>();
    for (JsonNode s : query(promUrl, "count by (__name__) ({job=\"" + job + "\"})")) {
      out.add(s.path("metric").path("__name__").asText());
    }
    return out.stream().sorted().toList();
  }

  /** Template variables as Grafana would fill them with "All" selected. */
  static String substitute(String expr) {
    return expr.replace("$__rate_interval", "1m")
        .replaceAll("\\$\\{(\\w+)(:\\w+)?\\}", ".*")
        .replaceAll("\\$(\\w+)", ".*");
  }

  /** Panel title -> expression, for every target of every dashboard. */
  private static Map<String, String> panelQueries() throws Exception {
    Map<String, String> out = new LinkedHashMap<>();
    try (Stream<Path> files = Files.list(Repo.path("deploy/grafana/dashboards"))) {
      for (Path f : files.filter(p -> p.toString().endsWith(".json")).sorted().toList()) {
        JsonNode d = new ObjectMapper().readTree(f.toFile());
        List<JsonNode> panels = new ArrayList<>();
        d.path("panels").forEach(panels::add);
        d.path("panels").forEach(p -> p.path("panels").forEach(panels::add)); // rows
        for (JsonNode p : panels) {
          for (JsonNode t : p.path("targets")) {
            out.put(
                d.get("title").asText()
                    + " / "
                    + p.get("title").asText()
                    + " / "
                    + t.get("refId").asText(),
                substitute(t.get("expr").asText()));
          }
        }
      }
    }
    assertTrue(out.size() >= 15, "queries: " + out.size());
    return out;
  }

  /**
   * The real corpus through a real agent, plus what the corpus lacks: two jobs failing on one GPU,
   * with the job and GPU metadata agents on GPU nodes send, and a record the service cannot read.
   */
  private void feed(String bootstrap) throws Exception {
    KafkaSettings kafka = new KafkaSettings(bootstrap, Map.of());
    try (Shipper shipper = new Shipper(kafka)) {
      Agent agent =
          new Agent(
              AgentSettings.builder()
                  .kafka(kafka)
                  .globs(List.of())
                  .stateDir(dir.resolve("replay").toString())
                  .build(),
              shipper,
              Clock.systemUTC());
      agent.replay(Repo.path("samples"));
      shipper.flush();
    }
    try (var p =
        new KafkaProducer<byte[], byte[]>(
            Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap),
            new ByteArraySerializer(),
            new ByteArraySerializer())) {
      for (String job : List.of("job-a", "job-b")) {
        LogRecord r =
            LogRecord.builder()
                .host("node-4")
                .job(job)
                .gpu(3)
                .source("/logs/" + job + ".log")
                .offset(0)
                .eventTime(Instant.now())
                .text("RuntimeError: CUDA error: an illegal memory access was encountered")
                .build();
        p.send(
                new ProducerRecord<>(
                    Topics.LOGS,
                    r.streamKey().getBytes(StandardCharsets.UTF_8),
                    WireJson.toBytes(r)))
            .get();
      }
      p.send(new ProducerRecord<>(Topics.INCIDENTS, "not json".getBytes(StandardCharsets.UTF_8)))
          .get();
    }
  }

  private List<JsonNode> query(String promUrl, String expr) {
    try {
      String body =
          http.send(
                  HttpRequest.newBuilder(
                          URI.create(
                              promUrl
                                  + "/api/v1/query?query="
                                  + URLEncoder.encode(expr, StandardCharsets.UTF_8)))
                      .build(),
                  HttpResponse.BodyHandlers.ofString())
              .body();
      JsonNode r = new ObjectMapper().readTree(body).path("data").path("result");
      List<JsonNode> out = new ArrayList<>();
      r.forEach(out::add);
      return out;
    } catch (Exception e) {
      return List.of();
    }
  }

  /** At least one series with a finite value. */
  private static boolean hasData(List<JsonNode> result) {
    for (JsonNode s : result) {
      String v = s.path("value").path(1).asText();
      if (!v.equals("NaN") && !v.contains("Inf") && !v.isEmpty()) {
        return true;
      }
    }
    return false;
  }

  private static void await(java.util.function.BooleanSupplier ok, RealPrometheus p, String what) {
    Await.until(
        what,
        () -> {
          assertTrue(p.isAlive(), "prometheus exited");
          return ok.getAsBoolean();
        },
        Boolean.TRUE::equals,
        java.time.Duration.ofSeconds(90));
  }
}
