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
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The field trial on a real H100 node ({@code src/test/resources/field-h100/}, see its README)
 * replayed through the local pipeline as {@code local --kernel-log FILE --gpu-samples FILE} does:
 * the recorded samples at their pace, the two jobs' output under {@code cudawatch run} with {@code
 * CUDA_VISIBLE_DEVICES=0} at the moments they were written, and the kernel log's lines as the
 * driver printed them. It must report what really happened: a leak of about 995 MiB/s with the
 * right time to full, the OOM after a steady leak, the illegal access an application fault, and the
 * Xid 31 owned by job ima-1.
 */
class FieldTrialReplayIT {
  private static final Path TRIAL = Path.of("src/test/resources/field-h100").toAbsolutePath();
  private static final double TRUE_GROWTH = 995.0 * (1 << 20);

  @TempDir Path dir;
  private final HttpClient http = HttpClient.newHttpClient();

  @Test
  void theFieldTrialReportsWhatReallyHappened() throws Exception {
    Path kmsg = dir.resolve("kmsg.log");
    List<String> kernel = Files.readAllLines(TRIAL.resolve("kmsg.log"));
    String xid = kernel.get(kernel.size() - 1);
    assertTrue(xid.contains("Xid"), xid);
    // the driver's lines from before the jobs; the Xid comes when ima-1 faults
    Files.write(kmsg, kernel.subList(0, kernel.size() - 1));
    var options =
        new LocalCluster.Options(
            dir.resolve("data"), dir.resolve("logs"), null, 0, 2, null, null, null, List.of());
    NodeSources sources =
        NodeSources.detect(
            false, kmsg, false, TRIAL.resolve("nvidia-smi-samples.csv"), "/dev/kmsg", null);
    ByteArrayOutputStream console = new ByteArrayOutputStream();
    try (LocalCluster cluster =
        new LocalCluster(options, new PrintStream(console, true, StandardCharsets.UTF_8))
            .withNodeSources(sources)) {
      cluster.start();
      String base = "http://127.0.0.1:" + cluster.httpPort();
      Await.until(
          "the replay started", () -> cluster.gpuReplay().startedAt() > 0, Duration.ofSeconds(30));
      long t0 = cluster.gpuReplay().startedAt();

      // leak-1 trains, leaking, until PyTorch runs out of memory at t = 51 s
      Path go = dir.resolve("oom-now");
      Process leak =
          run(
              cluster.bootstrapServers(),
              "leak-1",
              "cat "
                  + TRIAL.resolve("leak-job.stdout.log")
                  + "; while [ ! -e "
                  + go
                  + " ]; do sleep 0.02; done; cat "
                  + TRIAL.resolve("leak-job.stderr.log")
                  + " >&2; exit 1");
      sleepUntil(t0 + 51_000);
      Files.createFile(go);
      assertTrue(leak.waitFor(60, TimeUnit.SECONDS));
      assertEquals(1, leak.exitValue());

      // ima-1 starts after it; its Triton kernel writes past its buffer and the driver logs Xid 31
      Process ima =
          run(
              cluster.bootstrapServers(),
              "ima-1",
              "cat "
                  + TRIAL.resolve("ima-job.stdout.log")
                  + " "
                  + TRIAL.resolve("ima-job.stderr.log")
                  + " >&2; exit 1");
      assertTrue(ima.waitFor(60, TimeUnit.SECONDS));
      JsonNode illegal = awaitIncident(base, "illegal_memory_access", i -> true);
      assertEquals("ima-1", illegal.path("job").asText());
      Files.writeString(kmsg, xid + "\n", StandardOpenOption.APPEND);

      JsonNode leakWarning = awaitIncident(base, "memory_leak", i -> true);
      double growth = leakWarning.at("/fields/growth_bytes_per_second").asDouble();
      assertTrue(
          Math.abs(growth - TRUE_GROWTH) <= 0.25 * TRUE_GROWTH,
          "growth " + growth / (1 << 20) + " MiB/s, truth 995: " + leakWarning);
      double left =
          (leakWarning.at("/fields/memory_total_bytes").asDouble()
                  - leakWarning.at("/fields/memory_used_bytes").asDouble())
              / TRUE_GROWTH;
      double predicted = leakWarning.at("/fields/predicted_seconds_to_full").asDouble();
      assertTrue(
          Math.abs(predicted - left) <= 0.25 * left,
          "time to full " + predicted + " s, truth " + left + " s");

      JsonNode oom =
          awaitIncident(base, "cuda_oom", i -> i.at("/fields/memory_before").isTextual());
      assertEquals("leak-1", oom.path("job").asText());
      assertEquals("steady_leak", oom.at("/fields/memory_before").asText(), oom.toString());

      JsonNode gpuXid = awaitIncident(base, "gpu_xid", i -> true);
      assertEquals(31, gpuXid.at("/fields/xid").asInt());
      assertEquals("ima-1", gpuXid.path("job").asText(), gpuXid.toString());
      assertTrue(
          gpuXid.at("/fields/attribution/job").asText().contains("GPU 0"), gpuXid.toString());

      JsonNode verdict =
          awaitIncident(base, "illegal_memory_access", i -> i.path("verdict").isTextual());
      assertEquals("application_fault", verdict.path("verdict").asText());
    }
  }

  private JsonNode awaitIncident(
      String base, String cls, java.util.function.Predicate<JsonNode> ok) {
    JsonNode[] found = new JsonNode[1];
    Await.until(
        "a " + cls + " incident",
        () -> {
          try {
            for (JsonNode i :
                WireJson.mapper()
                    .readTree(get(base + "/api/incidents?class=" + cls))
                    .path("incidents")) {
              if (ok.test(i)) {
                found[0] = i;
                return true;
              }
            }
          } catch (Exception e) {
            return false;
          }
          return false;
        },
        Duration.ofSeconds(90));
    return found[0];
  }

  private static void sleepUntil(long epochMillis) throws InterruptedException {
    long wait = epochMillis - System.currentTimeMillis();
    if (wait > 0) {
      Thread.sleep(wait); // the recording's pace, not a wait for state
    }
  }

  private Process run(String bootstrap, String job, String script) throws Exception {
    ProcessBuilder pb =
        new ProcessBuilder(
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
                script)
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
