package dev.cudawatch.dist;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.kafka.embedded.EmbeddedKafkaBroker;
import dev.cudawatch.testkit.Await;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tarball as a node without Java gets it: unpacked in an empty directory and run with a PATH
 * that has no {@code java} and no JAVA_HOME, so every command runs on the bundled runtime. {@code
 * classify} diagnoses a sample, the shipped configs pass {@code check}, and {@code local} (broker,
 * Flink job, alerts server, agent: every module the runtime must hold) serves /healthz and
 * diagnoses the samples it replays.
 */
class TarballIT {
  static final List<String> TOOLS = List.of("bash", "env", "readlink", "dirname");

  @TempDir Path dir;
  Process local;

  @AfterEach
  void stopLocal() throws InterruptedException {
    if (local != null && local.isAlive()) {
      local.destroy();
      if (!local.waitFor(30, TimeUnit.SECONDS)) {
        local.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    }
  }

  @Test
  void unpackedOnAPathWithoutJavaItClassifiesAndRunsLocal() throws Exception {
    Path tarball = Cmd.artifact("cudawatch-" + Cmd.VERSION + "-linux-x86_64", ".tar.gz");
    Cmd.ok("tar", "-xzf", tarball.toString(), "-C", dir.toString());
    Path home = dir.resolve("cudawatch-" + Cmd.VERSION);
    for (String f :
        List.of(
            "bin/cudawatch",
            "runtime/bin/java",
            "lib/cudawatch-agent.jar",
            "lib/cudawatch-classify.jar",
            "lib/cudawatch-alerts.jar",
            "lib/cudawatch-local.jar",
            "lib/cudawatch-processor.jar",
            "lib/cudawatch-simulate.jar",
            "conf/agent.yaml",
            "conf/alerts.yaml",
            "conf/processor.yaml",
            "systemd/cudawatch-agent.service",
            "slurm/prolog.sh",
            "slurm/epilog.sh",
            "slurm/cudawatch-srun",
            "samples/illegal_address_torch.log")) {
      assertTrue(Files.isRegularFile(home.resolve(f)), f + " missing from the tarball");
    }
    assertTrue(Files.isExecutable(home.resolve("bin/cudawatch")));

    // a PATH of only what the launcher itself calls: no java on it, no JAVA_HOME
    Path path = Files.createDirectory(dir.resolve("path"));
    for (String tool : TOOLS) {
      Files.createSymbolicLink(
          path.resolve(tool), Path.of(Cmd.ok("bash", "-c", "command -v " + tool).strip()));
    }
    Map<String, String> env =
        Map.of("PATH", path.toString(), "HOME", dir.toString(), "LANG", "C.UTF-8");
    Cmd noJava =
        Cmd.run(
            List.of(path.resolve("bash").toString(), "-c", "command -v java"),
            dir,
            env,
            Duration.ofSeconds(30));
    assertNotEquals(0, noJava.status(), "java is on the test's PATH: " + noJava.out());

    String launcher = home.resolve("bin/cudawatch").toString();
    Cmd version = Cmd.run(List.of(launcher, "--version"), dir, env, Duration.ofMinutes(1));
    assertEquals(0, version.status(), version.out());
    assertTrue(version.out().startsWith("cudawatch " + Cmd.VERSION), version.out());

    Cmd classify =
        Cmd.run(
            List.of(
                launcher, "classify", home.resolve("samples/illegal_address_torch.log").toString()),
            dir,
            env,
            Duration.ofMinutes(2));
    assertEquals(0, classify.status(), classify.out());
    assertTrue(classify.out().contains("ROOT CAUSE  illegal_memory_access"), classify.out());

    List<String> check = new ArrayList<>(List.of(launcher, "check"));
    for (String c : List.of("agent", "alerts", "processor")) {
      check.add(home.resolve("conf/" + c + ".yaml").toString());
    }
    Cmd checked = Cmd.run(check, dir, env, Duration.ofMinutes(2));
    assertEquals(0, checked.status(), checked.out());

    int port = EmbeddedKafkaBroker.freePort();
    Path out = dir.resolve("local.out");
    ProcessBuilder pb =
        new ProcessBuilder(
                launcher,
                "local",
                "--http-port",
                String.valueOf(port),
                "--data-dir",
                dir.resolve("data").toString(),
                "--logs",
                dir.resolve("logs").toString(),
                "--replay",
                home.resolve("samples").toString(),
                "--no-kernel-log",
                "--no-gpu-samples",
                "--parallelism",
                "1")
            .directory(dir.toFile())
            .redirectErrorStream(true)
            .redirectOutput(out.toFile());
    pb.environment().clear();
    pb.environment().putAll(env);
    local = pb.start();

    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    String base = "http://127.0.0.1:" + port;
    Await.until(
        "local's /healthz on the bundled runtime",
        () -> {
          if (!local.isAlive()) {
            throw new AssertionError(
                "local exited " + local.exitValue() + ":\n" + Files.readString(out));
          }
          return get(http, base + "/healthz");
        },
        body -> body.contains("\"status\":\"ok\""),
        Duration.ofMinutes(3));
    // the Flink job ran on the bundled runtime: the replayed sample's incident came through
    Await.until(
        "the replayed samples' illegal_memory_access incident",
        () -> get(http, base + "/api/incidents?class=illegal_memory_access&limit=10"),
        body -> body.contains("illegal_memory_access"),
        Duration.ofMinutes(4));

    local.destroy();
    assertTrue(local.waitFor(60, TimeUnit.SECONDS), "local did not stop on SIGTERM");
  }

  static String get(HttpClient http, String url) throws Exception {
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
            HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() != 200) {
      throw new IllegalStateException(url + ": HTTP " + r.statusCode());
    }
    return r.body();
  }
}
