package dev.cudawatch.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cudawatch.common.wire.WireJson;
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
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 14's headline on the real local pipeline (agent, Kafka, Flink, alerts service): three real
 * PyTorch illegal-access tracebacks, which name no GPU, in three jobs on one host fire
 * RepeatedIllegalMemoryAccess for an unknown GPU and say so; the same three run under {@code
 * cudawatch run} with {@code CUDA_VISIBLE_DEVICES=3} fire it for GPU 3.
 */
class AttributionIT {
  /** Captured on an NVIDIA H200 (samples/): "CUDA error: an illegal memory access", no GPU. */
  private static final Path TRACEBACK = Path.of("../samples/illegal_address_torch.log");

  @TempDir Path dir;
  private final HttpClient http = HttpClient.newHttpClient();

  @Test
  void illegalAccessesWithoutAGpuStillFireAndUnderRunTheyNameGpu3() throws Exception {
    ByteArrayOutputStream console = new ByteArrayOutputStream();
    Path logs = dir.resolve("logs");
    var options =
        new LocalCluster.Options(
            dir.resolve("data"), logs, null, 0, 2, null, null, null, List.of());
    try (LocalCluster cluster =
        new LocalCluster(options, new PrintStream(console, true, StandardCharsets.UTF_8))) {
      cluster.start();
      String base = "http://127.0.0.1:" + cluster.httpPort();
      await(() -> get(base + "/healthz").contains("\"status\":\"ok\""));

      // three jobs' logs on this host, each ending in the real traceback
      for (String job : List.of("job-a", "job-b", "job-c")) {
        Path log = logs.resolve(job + ".log");
        Files.writeString(log, "epoch 1 step 10 loss 0.52\n", StandardOpenOption.CREATE);
        Files.write(log, Files.readAllBytes(TRACEBACK), StandardOpenOption.APPEND);
      }
      JsonNode unknown = awaitAlert(base, "unknown");
      assertTrue(
          unknown.at("/annotations/summary").asText().contains("GPU unknown"), unknown.toString());
      String why = unknown.at("/annotations/unknown").asText();
      assertTrue(why.startsWith("gpu unknown"), why);
      assertTrue(why.contains("attribution sources tried: log text"), why);

      // the same three under `cudawatch run`, each with CUDA_VISIBLE_DEVICES=3
      List<Process> runs = new ArrayList<>();
      for (String job : List.of("run-a", "run-b", "run-c")) {
        runs.add(run(cluster.bootstrapServers(), job));
      }
      for (Process p : runs) {
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "cudawatch run ends");
        assertEquals(0, p.exitValue(), "cat's status passes through");
      }
      JsonNode gpu3 = awaitAlert(base, "3");
      assertTrue(gpu3.at("/annotations/summary").asText().contains("GPU 3"), gpu3.toString());
      assertTrue(gpu3.at("/annotations/unknown").isMissingNode(), gpu3.toString());
      JsonNode incidents =
          WireJson.mapper()
              .readTree(get(base + "/api/incidents?class=illegal_memory_access&limit=100"))
              .get("incidents");
      boolean attributed = false;
      for (JsonNode i : incidents) {
        if (i.path("job").asText().equals("run-b")) {
          assertEquals(3, i.at("/fields/gpu").asInt());
          assertEquals("CUDA_VISIBLE_DEVICES", i.at("/fields/attribution/gpu").asText());
          assertEquals("--job", i.at("/fields/attribution/job").asText());
          attributed = true;
        }
      }
      assertTrue(attributed, "run-b's incident with its attribution: " + incidents);
    }
  }

  private JsonNode awaitAlert(String base, String gpu) throws Exception {
    JsonNode[] found = new JsonNode[1];
    Await.until(
        "RepeatedIllegalMemoryAccess firing for GPU " + gpu,
        () -> {
          try {
            for (JsonNode a :
                WireJson.mapper().readTree(get(base + "/api/alerts")).path("alerts")) {
              if (a.at("/labels/alertname").asText().equals("RepeatedIllegalMemoryAccess")
                  && a.at("/labels/gpu").asText().equals(gpu)) {
                found[0] = a;
                return true;
              }
            }
          } catch (Exception e) {
            return false;
          }
          return false;
        },
        Duration.ofSeconds(120));
    return found[0];
  }

  private Process run(String bootstrap, String job) throws Exception {
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
            "cat",
            TRACEBACK.toAbsolutePath().toString());
    ProcessBuilder pb =
        new ProcessBuilder(cmd)
            .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
            .redirectOutput(dir.resolve(job + ".out").toFile())
            .redirectError(dir.resolve(job + ".err").toFile());
    pb.environment().put("CUDA_VISIBLE_DEVICES", "3");
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

  private static void await(java.util.function.BooleanSupplier ok) {
    Await.until("the pipeline's state", ok, Duration.ofSeconds(90));
  }
}
