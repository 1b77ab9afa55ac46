package dev.cudawatch.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.launcher.LocalCluster;
import dev.cudawatch.testkit.Await;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What an operator types, run as real processes through {@code bin/cudawatch} on the jars the build
 * made: {@code check} on every shipped file and on broken ones, {@code catalog test}, one-line
 * configuration errors with exit 2 everywhere, warnings and JSON logs on stderr, {@code --version},
 * {@code classify --fail-on} and {@code incidents} against a running alerts service.
 */
class OperatorCommandsIT {
  static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  static final Path LAUNCHER = ROOT.resolve("bin/cudawatch");

  /** Other programs' files in deploy/: check must say they are not cudawatch's. */
  static final List<String> FOREIGN =
      List.of(
          "deploy/alertmanager/",
          "deploy/compose/podman-override.yml",
          "deploy/flink/",
          "deploy/images/",
          "deploy/grafana/",
          "deploy/prometheus/",
          "deploy/shippers/filebeat/",
          "deploy/shippers/fluent-bit/",
          "deploy/shippers/otel-collector/",
          "deploy/shippers/vector/",
          "deploy/k8s/base/alerts-network-policy.yaml",
          "deploy/k8s/base/grafana-dashboards.yaml",
          "deploy/k8s/base/kustomization.yaml",
          "deploy/k8s/base/namespace.yaml",
          "deploy/k8s/base/prometheus-rule.yaml",
          "deploy/k8s/overlays/");

  @TempDir Path dir;

  record Result(int status, String out, String err) {}

  @Test
  void checkPassesEveryCudawatchFileShippedInDeployAndSamplesAndTellsTheOthersApart()
      throws Exception {
    List<String> ours = new ArrayList<>();
    List<String> foreign = new ArrayList<>();
    for (String top : List.of("deploy", "samples")) {
      try (Stream<Path> files = Files.walk(ROOT.resolve(top))) {
        files
            .filter(p -> p.toString().matches(".*\\.ya?ml$"))
            .filter(p -> !p.toString().contains("node_modules"))
            .map(p -> ROOT.relativize(p).toString())
            .sorted()
            .forEach(p -> (FOREIGN.stream().anyMatch(p::startsWith) ? foreign : ours).add(p));
      }
    }
    // the built-in catalog and rules are shipped too
    ours.add("diagnosis/src/main/resources/cudawatch/catalog.yaml");
    ours.add("processor/src/main/resources/cudawatch/rules.yaml");
    assertTrue(ours.size() >= 10, "cudawatch files found: " + ours);

    Result r = run(Map.of(), prepend("check", ours));
    assertEquals(0, r.status(), r.err());
    for (String f : ours) {
      assertTrue(r.out().contains(f + ": ok ("), f + " not reported ok:\n" + r.out());
    }
    assertTrue(r.out().contains("deploy/k8s/base/agent.yaml: ok (agent config in ConfigMap"));

    Result other = run(Map.of(), prepend("check", foreign));
    assertEquals(1, other.status());
    for (String f : foreign) {
      assertTrue(
          other.err().contains(f + ":1: not a cudawatch configuration"), f + ":\n" + other.err());
    }
  }

  @Test
  void checkNamesEveryProblemOfBrokenFilesOneLineEach() throws Exception {
    Path alerts =
        write(
            "alerts.yaml",
            "kafka:\n  bootstrap_servers: kafka:9092\n  propertes: {}\nhttp_prot: 7460\n");
    Path agent = write("agent.yaml", "files: [\"/var/log/*.log\"]\nhttp_port: 99999\n");
    Path processor =
        write("processor.yaml", "kafka:\n  bootstrap_servers: kafka:9092\nparallelism: many\n");
    Path catalog =
        write(
            "site.yaml",
            "version: 1\nsignatures:\n  - id: a\n    class: gpu_on_fire\n    keywords: [x]\n");
    Path rules =
        write(
            "rules.yaml",
            "rules:\n  - name: X\n    type: count\n    classes: [cuda_oom]\n    key: [colour]\n");
    Path dup = write("dup-agent.yaml", "host: a\nhost: b\n");
    Result r =
        run(
            Map.of(),
            "check",
            alerts.toString(),
            agent.toString(),
            processor.toString(),
            catalog.toString(),
            rules.toString(),
            dup.toString());
    assertEquals(1, r.status());
    List<String> lines = r.err().lines().toList();
    assertEquals(
        List.of(
            alerts + ":3: kafka.propertes: unknown key",
            alerts + ":4: http_prot: unknown key",
            agent + ":2: http_port: must be -1 (off) or 0..65535",
            processor
                + ":3: parallelism: bad value: Cannot deserialize value of type `java.lang.Integer`"
                + " from String \"many\": not a valid `java.lang.Integer` value",
            catalog
                + ":3: signature 'a': unknown class 'gpu_on_fire' (classes are those of"
                + " taxonomy.yaml, docs/taxonomy.md)",
            rules + ": rule 'X': unknown key field 'colour'",
            dup + ":2: not valid YAML: Duplicate field 'host'"),
        lines.stream().map(l -> l.replaceAll(" \\((known keys here|use) .*\\)$", "")).toList());
  }

  @Test
  void catalogTestRunsTheEmbeddedCasesAndFailsOnAWrongExpectation() throws Exception {
    Result ok =
        run(
            Map.of(),
            "catalog",
            "test",
            ROOT.resolve("deploy/catalog/site-catalog.yaml").toString());
    assertEquals(0, ok.status(), ok.out() + ok.err());
    assertTrue(ok.out().contains("2 passed, 0 failed"), ok.out());

    String wrong =
        Files.readString(ROOT.resolve("deploy/catalog/site-catalog.yaml"))
            .replace("fields: {gpu: \"3\"}", "fields: {gpu: \"4\"}");
    Path f = write("wrong.yaml", wrong);
    Result bad = run(Map.of(), "catalog", "test", f.toString());
    assertEquals(1, bad.status(), bad.out());
    assertTrue(bad.out().contains("FAIL  " + f + ":16: the arena allocator's OOM"), bad.out());
    assertTrue(bad.out().contains("incident #1: field gpu = '3', expected '4'"), bad.out());
    assertTrue(bad.out().contains("1 passed, 1 failed"), bad.out());
  }

  @Test
  void everyConfigurationErrorIsOneLineWithExitTwoAndDebugShowsTheTrace() throws Exception {
    Path bad = write("bad.yaml", "kafka:\n  bootstrap_servers: nohost\n");
    Path badCatalog =
        write(
            "cat.yaml",
            "signatures:\n  - id: a\n    class: cuda_error\n    keywords: [x]\n    match: ['(unclosed']\n");
    Path log = ROOT.resolve("samples/oom_single.log");
    Map<String, String[]> cases = new HashMap<>();
    cases.put("alerts", new String[] {"alerts", "--config", bad.toString()});
    cases.put("agent", new String[] {"agent", "--config", bad.toString()});
    cases.put("processor", new String[] {"processor", "--config", bad.toString()});
    if (Files.exists(ROOT.resolve("simulator/target/cudawatch-simulate.jar"))) {
      cases.put("simulate", new String[] {"simulate", "--out", dir.toString(), "--hosts", "0"});
    }
    cases.put(
        "local",
        new String[] {"local", "--catalog", badCatalog.toString(), "--logs", dir.toString()});
    cases.put(
        "classify", new String[] {"classify", "--catalog", badCatalog.toString(), log.toString()});
    for (var c : cases.entrySet()) {
      Result r = run(Map.of(), c.getValue());
      assertEquals(2, r.status(), c.getKey() + ": " + r.err());
      List<String> lines = r.err().lines().filter(l -> !l.isBlank()).toList();
      assertEquals(1, lines.size(), c.getKey() + " printed more than one line:\n" + r.err());
      assertTrue(lines.get(0).startsWith("cudawatch "), lines.get(0));
      assertFalse(r.err().contains("\tat "), c.getKey() + " printed a stack trace");
    }
    assertTrue(
        run(Map.of(), cases.get("alerts"))
            .err()
            .contains("bad.yaml:2: kafka.bootstrap_servers: 'nohost' is not host:port"));
    assertTrue(run(Map.of(), cases.get("local")).err().contains("cat.yaml:2: signature 'a'"));
    Result debug = run(Map.of(), "alerts", "--config", bad.toString(), "--debug");
    assertEquals(2, debug.status());
    assertTrue(debug.err().contains("\tat dev.cudawatch."), debug.err());
  }

  @Test
  void warningsReachStderrAtTheDefaultLevelAndJsonLogsParse() throws Exception {
    Path config =
        write(
            "agent.yaml",
            "kafka:\n  bootstrap_servers: 127.0.0.1:9\nfiles: [\""
                + dir
                + "/logs/*.log\"]\nstate_dir: "
                + dir.resolve("state")
                + "\nnvidia_smi: /nonexistent/nvidia-smi\nhttp_port: 0\n");
    String warning = "GPU memory sampling is off: cannot run /nonexistent/nvidia-smi";
    Path err = dir.resolve("agent.err");
    Process text = start(Map.of(), err, "agent", "--config", config.toString());
    try {
      Await.until(
          "the agent's warning on stderr",
          () -> read(err).contains(warning),
          Duration.ofSeconds(60));
      assertTrue(
          read(err).lines().anyMatch(l -> l.contains(" WARN  GpuMemorySampler: " + warning)),
          read(err));
    } finally {
      stop(text);
    }
    Path jsonErr = dir.resolve("agent-json.err");
    Process json =
        start(
            Map.of("CUDAWATCH_LOG_FORMAT", "json"),
            jsonErr,
            "agent",
            "--config",
            config.toString());
    try {
      Await.until(
          "the agent's JSON warning",
          () -> read(jsonErr).contains(warning),
          Duration.ofSeconds(60));
    } finally {
      stop(json);
    }
    int parsed = 0;
    for (String line : read(jsonErr).lines().toList()) {
      if (!line.startsWith("{")) {
        continue; // the agent's own status line, printed for people
      }
      JsonNode n = WireJson.mapper().readTree(line);
      assertTrue(n.has("@timestamp") && n.has("log.level") && n.has("message"), line);
      parsed++;
      if (n.get("message").asText().startsWith(warning)) {
        assertEquals("WARN", n.get("log.level").asText());
        assertEquals("dev.cudawatch.ingest.streams.GpuMemorySampler", n.get("log.logger").asText());
      }
    }
    assertTrue(parsed >= 1, read(jsonErr));
    // a bad level is a configuration error like any other
    Result badOption = run(Map.of(), "agent", "--config", config.toString(), "--log-level", "loud");
    assertEquals(2, badOption.status(), badOption.err());
    Result badEnv =
        run(Map.of("CUDAWATCH_LOG_LEVEL", "loud"), "agent", "--config", config.toString());
    assertEquals(2, badEnv.status(), badEnv.err());
    assertEquals(
        "cudawatch agent: environment variable CUDAWATCH_LOG_LEVEL: unknown value 'loud' (use [error, warn, info, debug, trace])",
        badEnv.err().strip());
  }

  @Test
  void versionOnTheLauncherAndEveryCommand() throws Exception {
    Result top = run(Map.of(), "--version");
    assertEquals(0, top.status());
    assertTrue(
        top.out().matches("cudawatch \\S+ \\(commit ([0-9a-f]{7}|unknown)\\)\\n"), top.out());
    String line = top.out().strip();
    for (String cmd :
        List.of(
            "local",
            "classify",
            "classes",
            "agent",
            "run",
            "processor",
            "alerts",
            "simulate",
            "check",
            "incidents",
            "catalog")) {
      if (cmd.equals("simulate")
          && !Files.exists(ROOT.resolve("simulator/target/cudawatch-simulate.jar"))) {
        continue; // not built by `-pl integration-tests -am`; the whole build has it
      }
      Result r = run(Map.of(), cmd, "--version");
      assertEquals(0, r.status(), cmd + ": " + r.err());
      assertEquals(line, r.out().strip(), cmd);
    }
  }

  @Test
  void classifyFailOnGivesExitOneForAShellIf() throws Exception {
    String log = ROOT.resolve("samples/oom_single.log").toString();
    String healthy = ROOT.resolve("samples/healthy_training.log").toString();
    assertEquals(1, run(Map.of(), "classify", "--fail-on", "error", log).status());
    assertEquals(0, run(Map.of(), "classify", "--fail-on", "critical", log).status());
    assertEquals(0, run(Map.of(), "classify", "--fail-on", "warning", healthy).status());
    assertEquals(0, run(Map.of(), "classify", log).status());
    Result bad = run(Map.of(), "classify", "--fail-on", "fatal", log);
    assertEquals(2, bad.status());
    assertTrue(bad.err().contains("unknown severity 'fatal'"), bad.err());
  }

  @Test
  void incidentsQueriesARunningAlertsService() throws Exception {
    Path logs = Files.createDirectories(dir.resolve("logs"));
    LocalCluster.Options options =
        new LocalCluster.Options(
            dir.resolve("data"), logs, ROOT.resolve("samples"), 0, 1, null, null, null, List.of());
    try (LocalCluster cluster =
        new LocalCluster(
            options, new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8))) {
      cluster.start();
      String url = "http://127.0.0.1:" + cluster.httpPort();
      Await.until(
          "an OOM incident from the replayed samples",
          () -> {
            try {
              return run(Map.of(), "incidents", "--url", url, "--class", "cuda_oom", "--json")
                  .out()
                  .contains("\"cuda_oom\"");
            } catch (Exception e) {
              return false;
            }
          },
          Duration.ofSeconds(120));
      Result table = run(Map.of(), "incidents", "--url", url, "--since", "10m");
      assertEquals(0, table.status(), table.err());
      assertTrue(table.out().startsWith("TIME (UTC)"), table.out());
      assertTrue(table.out().contains("cuda_oom"), table.out());
      Result json = run(Map.of(), "incidents", "--url", url, "--class", "cuda_oom", "--json");
      for (String l : json.out().lines().toList()) {
        assertEquals("cuda_oom", WireJson.mapper().readTree(l).get("class").asText());
      }
      Result none = run(Map.of(), "incidents", "--url", url, "--host", "no-such-host");
      assertEquals(0, none.status());
      assertTrue(none.out().contains("(no incidents)"), none.out());
      Result future =
          run(Map.of(), "incidents", "--url", url, "--since", "2999-01-01T00:00:00Z", "--json");
      assertEquals("", future.out());
      Result metrics = run(Map.of(), "--version");
      String metricsText =
          new String(
              java.net.URI.create(url + "/metrics").toURL().openStream().readAllBytes(),
              StandardCharsets.UTF_8);
      String version = metrics.out().strip().split(" ")[1];
      assertTrue(metricsText.contains("cudawatch_build_info{revision=\""), metricsText);
      assertTrue(metricsText.contains("version=\"" + version + "\"} 1"), metricsText);
    }
    Result down = run(Map.of(), "incidents", "--url", "http://127.0.0.1:9");
    assertEquals(1, down.status());
    assertTrue(
        down.err().startsWith("cudawatch incidents: cannot reach http://127.0.0.1:9"), down.err());
  }

  private Path write(String name, String text) throws IOException {
    return Files.writeString(dir.resolve(name), text);
  }

  private static String[] prepend(String first, List<String> rest) {
    List<String> all = new ArrayList<>();
    all.add(first);
    all.addAll(rest);
    return all.toArray(String[]::new);
  }

  private static String read(Path p) {
    try {
      return Files.exists(p) ? Files.readString(p) : "";
    } catch (IOException e) {
      return "";
    }
  }

  private Process start(Map<String, String> env, Path err, String... args) throws IOException {
    List<String> cmd = new ArrayList<>(List.of(LAUNCHER.toString()));
    cmd.addAll(List.of(args));
    ProcessBuilder pb =
        new ProcessBuilder(cmd)
            .directory(ROOT.toFile())
            .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .redirectError(err.toFile());
    pb.environment().remove("CUDAWATCH_LOG_LEVEL");
    pb.environment().remove("CUDAWATCH_LOG_FORMAT");
    pb.environment().putAll(env);
    return pb.start();
  }

  private static void stop(Process p) throws InterruptedException {
    p.destroy();
    if (!p.waitFor(30, TimeUnit.SECONDS)) {
      p.destroyForcibly().waitFor();
    }
  }

  private Result run(Map<String, String> env, String... args) throws Exception {
    Path out = Files.createTempFile(dir, "out", ".txt");
    Path err = Files.createTempFile(dir, "err", ".txt");
    List<String> cmd = new ArrayList<>(List.of(LAUNCHER.toString()));
    cmd.addAll(List.of(args));
    ProcessBuilder pb =
        new ProcessBuilder(cmd)
            .directory(ROOT.toFile())
            .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
            .redirectOutput(out.toFile())
            .redirectError(err.toFile());
    pb.environment().remove("CUDAWATCH_LOG_LEVEL");
    pb.environment().remove("CUDAWATCH_LOG_FORMAT");
    pb.environment().putAll(env);
    Process p = pb.start();
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly().waitFor();
      throw new AssertionError(String.join(" ", args) + " did not finish in 120 s");
    }
    return new Result(p.exitValue(), Files.readString(out), Files.readString(err));
  }
}
