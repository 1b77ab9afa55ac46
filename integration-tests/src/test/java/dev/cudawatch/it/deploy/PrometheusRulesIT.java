package dev.cudawatch.it.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cudawatch.alerts.RealBinaries;
import dev.cudawatch.common.config.ConfigLoader;
import dev.cudawatch.ingest.AgentSettings;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The deployment's Prometheus, Alertmanager and Slurm files, checked by their own tools: promtool
 * check config, check rules and test rules (a unit test for every alert rule), amtool check-config,
 * and bash -n.
 */
class PrometheusRulesIT {
  @TempDir Path dir;

  private static String run(Path cwd, String... cmd) throws Exception {
    Process p = new ProcessBuilder(cmd).directory(cwd.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, p.waitFor(), String.join(" ", cmd) + "\n" + out);
    return out;
  }

  @Test
  void promtoolChecksTheConfigAndRulesAndEveryAlertRuleHasAUnitTest() throws Exception {
    String promtool = RealBinaries.require("promtool").toString();
    Path prom = Repo.path("deploy/prometheus");
    // the config as mounted in the container, with the rule files where they are here
    Path config = dir.resolve("prometheus.yml");
    Files.writeString(
        config,
        Files.readString(prom.resolve("prometheus.yml"))
            .replace("/etc/prometheus/rules/", prom.resolve("rules") + "/"));
    String out = run(dir, promtool, "check", "config", config.toString());
    assertTrue(out.contains("2 rule files found"), out);
    List<String> rules = new ArrayList<>(List.of(promtool, "check", "rules"));
    try (var s = Files.list(prom.resolve("rules"))) {
      s.sorted().forEach(p -> rules.add(p.toString()));
    }
    run(dir, rules.toArray(new String[0]));
    out = run(prom, promtool, "test", "rules", "tests/cudawatch-alerts.test.yml");
    assertTrue(out.contains("SUCCESS"), out);

    // every alert rule is exercised by a test
    String alerts = Files.readString(prom.resolve("rules/cudawatch-alerts.yml"));
    String tests = Files.readString(prom.resolve("tests/cudawatch-alerts.test.yml"));
    var m = java.util.regex.Pattern.compile("- alert: (\\w+)").matcher(alerts);
    int n = 0;
    while (m.find()) {
      n++;
      assertTrue(tests.contains("alertname: " + m.group(1)), "no promtool test for " + m.group(1));
    }
    assertEquals(8, n);
  }

  @Test
  void everyAlertHasOnePathTheJobsRulesAreNotCopiedIntoPrometheus() throws Exception {
    String alerts = Files.readString(Repo.path("deploy/prometheus/rules/cudawatch-alerts.yml"));
    JsonNode jobRules = Repo.yaml("processor/src/main/resources/cudawatch/rules.yaml");
    List<String> names = new ArrayList<>(List.of("GpuMemoryLeak", "GpuJobFailure"));
    jobRules.path("rules").forEach(r -> names.add(r.path("name").asText()));
    assertTrue(names.size() > 5, names.toString());
    var m = java.util.regex.Pattern.compile("- alert: (\\w+)").matcher(alerts);
    while (m.find()) {
      String prom = m.group(1).replaceFirst("^Cudawatch", "");
      assertFalse(names.contains(prom), m.group(1) + " copies the job's rule " + prom);
      assertTrue(
          m.group(1)
              .matches(
                  "Cudawatch(PipelineDown|ConsumerLagging|DeadLetters|NotificationsFailing"
                      + "|AgentUnhealthy|AgentLagging|FlinkJobRestarting|CheckpointsFailing)"),
          m.group(1));
    }
  }

  @Test
  void amtoolAcceptsTheAlertmanagerConfig() throws Exception {
    String amtool = RealBinaries.require("amtool").toString();
    // the secrets are files (*_file), never inline
    String yml = Files.readString(Repo.path("deploy/alertmanager/alertmanager.yml"));
    for (String secret : List.of("api_url_file:", "routing_key_file:", "api_key_file:")) {
      assertTrue(yml.contains(secret), secret);
    }
    assertFalse(yml.contains("routing_key:") || yml.contains("api_key:"), "an inline secret");
    String out =
        run(
            dir,
            amtool,
            "check-config",
            Repo.path("deploy/alertmanager/alertmanager.yml").toString());
    assertTrue(out.contains("SUCCESS"), out);
    assertTrue(
        out.contains("1 templates"), "templates/cudawatch.tmpl is loaded and parses: " + out);
    // every alert reaches the team webhook (the demo's receiver); critical ones also page Slack,
    // broken GPUs PagerDuty, failed jobs Opsgenie
    String config = "--config.file=" + Repo.path("deploy/alertmanager/alertmanager.yml");
    for (String[] c :
        List.of(
            new String[] {
              "gpu-ops-slack,gpu-oncall-pagerduty,team-webhook",
              "alertname=LemonGpu",
              "severity=critical"
            },
            new String[] {
              "gpu-ops-slack,gpu-oncall-pagerduty,team-webhook",
              "alertname=RepeatedGpuXidHardware",
              "severity=critical"
            },
            new String[] {"team-webhook", "alertname=RepeatedOutOfMemory", "severity=warning"},
            new String[] {"team-webhook", "alertname=CodeBug", "severity=error"},
            new String[] {"team-webhook", "alertname=CudawatchConsumerLagging", "severity=warning"},
            new String[] {"ml-platform-opsgenie,team-webhook", "alertname=GpuJobFailure"},
            new String[] {
              "gpu-ops-slack,ml-platform-opsgenie,team-webhook",
              "alertname=JobFailure",
              "severity=critical"
            })) {
      List<String> cmd = new ArrayList<>(List.of(amtool, "config", "routes", "test", config));
      cmd.addAll(List.of(c).subList(1, c.length));
      String receivers =
          run(dir, cmd.toArray(new String[0]))
              .lines()
              .filter(l -> !l.startsWith("Warning"))
              .findFirst()
              .orElse("")
              .strip();
      assertEquals(c[0], receivers, String.join(" ", c));
    }
  }

  @Test
  void theSlurmExamplesAreValid() throws Exception {
    for (String script : List.of("cudawatch-srun", "prolog.sh", "epilog.sh")) {
      run(dir, "bash", "-n", Repo.path("deploy/slurm/" + script).toString());
    }
    AgentSettings a =
        new ConfigLoader("CUDAWATCH_AGENT", Map.of())
            .load(Repo.path("deploy/slurm/agent.yaml"), AgentSettings.class);
    assertEquals("/dev/kmsg", a.kernelLog());
    assertTrue(
        Files.readString(Repo.path("deploy/slurm/cudawatch-srun")).contains("bin/cudawatch\" run"),
        "the wrapper runs jobs under cudawatch run");
  }
}
