package dev.cudawatch.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cudawatch.alerts.handoff.ApiServerDouble;
import dev.cudawatch.alerts.handoff.NodeConditionSettings;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.ingest.AgentSettings;
import dev.cudawatch.ingest.RunMain;
import dev.cudawatch.testkit.Await;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Only the kernel speaks for the hardware, on the whole local pipeline (agent, Kafka, Flink, alerts
 * service with node conditions on, against a real HTTP server answering as kube-apiserver): a job
 * under {@code cudawatch run}, and a health check's log, print the kernel's Xid 79 line for GPU 0
 * (PCI 0000:3b:00). That makes informational incidents and nothing else: no alert, no GPU ledger
 * entry, no action, no node condition naming GPU 0, also after the kernel log's own Xid 48 for GPU
 * 1 has done all of these (so the pipeline has passed the job's lines). Then the same Xid 79 line
 * in the kernel log does all of them for GPU 0.
 */
class KernelTrustIT {
  private static final String XID_79 =
      "NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, name=python3, GPU has fallen off the bus.";
  private static final String XID_48_GPU1 =
      "NVRM: Xid (PCI:0000:86:00): 48, pid=4243, name=python3, An uncorrectable double bit error"
          + " (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0.";
  private static final String CONDITION = "CudawatchGpuProblem";

  @TempDir Path dir;
  private final HttpClient http = HttpClient.newHttpClient();

  @Test
  void aJobsKernelLineMovesNothingWhileTheKernelsOwnDoesEverything() throws Exception {
    Path kern = Files.createFile(dir.resolve("kern.log"));
    Path logs = dir.resolve("logs");
    String host = AgentSettings.defaults().host();
    Path token = Files.writeString(dir.resolve("token"), "t0k3n");
    try (ApiServerDouble kube = new ApiServerDouble("t0k3n", null)) {
      kube.addNode(host);
      var options =
          new LocalCluster.Options(
              dir.resolve("data"), logs, null, 0, 2, null, null, null, List.of());
      ByteArrayOutputStream console = new ByteArrayOutputStream();
      try (LocalCluster cluster =
          new LocalCluster(options, new PrintStream(console, true, StandardCharsets.UTF_8))
              .withNodeSources(
                  new NodeSources(kern.toString(), "test", fakeNvidiaSmi(), null, "test"))
              .withAlertsSettings(
                  a ->
                      a.toBuilder()
                          .nodeConditions(
                              NodeConditionSettings.builder()
                                  .enabled(true)
                                  .apiServerUrl(kube.url())
                                  .tokenFile(token.toString())
                                  .retryInitialMs(50L)
                                  .heartbeatIntervalMs(300_000L)
                                  .build())
                          .build())) {
        cluster.start();
        String base = "http://127.0.0.1:" + cluster.httpPort();
        Await.until(
            "the pipeline to be healthy",
            () -> get(base + "/healthz").contains("\"status\":\"ok\""),
            Duration.ofSeconds(90));

        // a job on GPU 0 prints the kernel's line; a health check's log holds a dmesg capture
        Process job = run(cluster.bootstrapServers(), "train-7", "echo '" + XID_79 + "'");
        Files.writeString(
            logs.resolve("health-check.log"),
            "running dmesg\n[ 8123.4] " + XID_79 + "\n",
            StandardOpenOption.CREATE);
        assertTrue(job.waitFor(120, TimeUnit.SECONDS), "cudawatch run ends");
        assertEquals(0, job.exitValue(), "echo's status passes through");
        List<JsonNode> quotes =
            awaitItems(
                base + "/api/incidents?class=kernel_line_quoted&limit=100",
                "incidents",
                l -> l.size() >= 2,
                "both quotes recorded");
        for (JsonNode q : quotes) {
          assertEquals("info", q.path("severity").asText(), q.toString());
          assertEquals("gpu_xid", q.at("/fields/quoted_class").asText(), q.toString());
        }
        assertTrue(
            quotes.stream().anyMatch(q -> "train-7".equals(q.path("job").asText())),
            "the job's quote is the job's: " + quotes);

        // the kernel log's Xid 48 for GPU 1: once its alert, ledger entry and node condition are
        // in, the pipeline has passed the job's lines
        append(kern, XID_48_GPU1);
        awaitItems(base + "/api/alerts", "alerts", l -> any(l, namesGpu("1")), "GPU 1's alert");
        awaitItems(base + "/api/gpus", "gpus", l -> any(l, gpu("1")), "GPU 1 in the ledger");
        awaitCondition(kube, host, "GPU 1");

        List<JsonNode> alerts = items(base + "/api/alerts", "alerts");
        assertFalse(any(alerts, namesGpu("0")), "no alert naming GPU 0: " + alerts);
        assertFalse(
            any(alerts, a -> a.toString().contains("3b:00")), "nor its PCI address: " + alerts);
        List<JsonNode> gpus = items(base + "/api/gpus", "gpus");
        assertFalse(any(gpus, gpu("0")), "no ledger entry, no action for GPU 0: " + gpus);
        String message = kube.condition(host, CONDITION).path("message").asText();
        assertFalse(message.contains("GPU 0"), "no node condition for GPU 0: " + message);
        assertEquals(
            0, items(base + "/api/incidents?class=gpu_lost&limit=100", "incidents").size());

        // the same line from the kernel log: the kernel's word on GPU 0
        append(kern, XID_79);
        JsonNode page =
            awaitItems(base + "/api/alerts", "alerts", l -> any(l, namesGpu("0")), "GPU 0's alert")
                .stream()
                .filter(namesGpu("0"))
                .findFirst()
                .orElseThrow();
        assertEquals("critical", page.at("/labels/severity").asText(), page.toString());
        JsonNode ledger =
            awaitItems(base + "/api/gpus", "gpus", l -> any(l, gpu("0")), "GPU 0 in the ledger")
                .stream()
                .filter(gpu("0"))
                .findFirst()
                .orElseThrow();
        assertEquals("reboot_node", ledger.path("recommendation").asText(), ledger.toString());
        awaitCondition(kube, host, "GPU 0");
        assertEquals("True", kube.condition(host, CONDITION).path("status").asText());
      }
    }
  }

  /** An alert whose GPU label is {@code gpu}. */
  private static Predicate<JsonNode> namesGpu(String gpu) {
    return a -> gpu.equals(a.at("/labels/gpu").asText());
  }

  private static Predicate<JsonNode> gpu(String gpu) {
    return g -> gpu.equals(g.path("gpu").asText());
  }

  private static boolean any(List<JsonNode> l, Predicate<JsonNode> p) {
    return l.stream().anyMatch(p);
  }

  private static void append(Path f, String line) throws Exception {
    Files.writeString(f, line + "\n", StandardOpenOption.APPEND);
  }

  private void awaitCondition(ApiServerDouble kube, String host, String gpu) {
    Await.until(
        "the node condition naming " + gpu,
        () -> {
          JsonNode c = kube.condition(host, CONDITION);
          String m = c == null ? "" : c.path("message").asText();
          return m.contains(gpu + ":") || m.contains(gpu + " (");
        },
        Duration.ofSeconds(120));
  }

  private List<JsonNode> awaitItems(
      String url, String field, Predicate<List<JsonNode>> ok, String what) {
    List<List<JsonNode>> last = new ArrayList<>();
    Await.until(
        what,
        () -> {
          List<JsonNode> l = items(url, field);
          last.clear();
          last.add(l);
          return ok.test(l);
        },
        Duration.ofSeconds(120));
    return last.get(0);
  }

  private List<JsonNode> items(String url, String field) {
    List<JsonNode> out = new ArrayList<>();
    try {
      WireJson.mapper().readTree(get(url)).path(field).forEach(out::add);
    } catch (Exception e) {
      // not up yet: nothing
    }
    return out;
  }

  /** nvidia-smi's answer on a node with two GPUs (its PCI map); no memory samples. */
  private String fakeNvidiaSmi() throws Exception {
    Path smi = dir.resolve("nvidia-smi");
    Files.writeString(
        smi,
        "#!/bin/sh\n"
            + "case \"$*\" in\n"
            + "  *pci.bus_id*) echo '0, 00000000:3B:00.0'; echo '1, 00000000:86:00.0' ;;\n"
            + "esac\n");
    Files.setPosixFilePermissions(smi, PosixFilePermissions.fromString("rwxr-xr-x"));
    return smi.toString();
  }

  private Process run(String bootstrap, String job, String script) throws Exception {
    List<String> cmd =
        List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx128m",
            "-cp",
            System.getProperty("java.class.path"),
            RunMain.class.getName(),
            "--bootstrap-servers",
            bootstrap,
            "--job",
            job,
            "--drain-seconds",
            "30",
            "--",
            "sh",
            "-c",
            script);
    ProcessBuilder pb =
        new ProcessBuilder(cmd)
            .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
            .redirectOutput(dir.resolve(job + ".out").toFile())
            .redirectError(dir.resolve(job + ".err").toFile());
    pb.environment().put("CUDA_VISIBLE_DEVICES", "0");
    pb.environment().put("CUDAWATCH_AGENT_STATE_DIR", dir.resolve(job + "-state").toString());
    pb.environment().put("CUDAWATCH_AGENT_RUN_SPOOL_ROOT", dir.resolve("spools").toString());
    pb.environment().put("CUDAWATCH_AGENT_NVIDIA_SMI", "/nonexistent/nvidia-smi");
    for (String k : List.of("RANK", "LOCAL_RANK", "SLURM_JOB_ID", "SLURM_STEP_GPUS")) {
      pb.environment().remove(k);
    }
    return pb.start();
  }

  private String get(String url) {
    try {
      return http.send(
              HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString())
          .body();
    } catch (Exception e) {
      return "";
    }
  }
}
