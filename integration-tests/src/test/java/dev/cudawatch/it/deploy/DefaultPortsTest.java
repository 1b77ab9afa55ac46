package dev.cudawatch.it.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.alerts.AlertsSettings;
import dev.cudawatch.common.http.DefaultPorts;
import dev.cudawatch.ingest.AgentSettings;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The ports cudawatch listens on must not collide with what runs on GPU nodes, and every default,
 * config and deployment file must agree on them.
 */
class DefaultPortsTest {
  /** What GPU nodes commonly run, with the port it takes. */
  private static final Map<Integer, String> TAKEN =
      Map.ofEntries(
          Map.entry(9400, "dcgm-exporter"),
          Map.entry(9100, "node_exporter"),
          Map.entry(9090, "Prometheus"),
          Map.entry(9093, "Alertmanager"),
          Map.entry(9092, "Kafka"),
          Map.entry(8081, "Flink's REST API"),
          Map.entry(3000, "Grafana"),
          Map.entry(5555, "DCGM's host engine"),
          Map.entry(6006, "TensorBoard"),
          Map.entry(6817, "slurmctld"),
          Map.entry(6818, "slurmd"),
          Map.entry(6819, "slurmdbd"),
          Map.entry(6820, "slurmrestd"),
          Map.entry(8265, "Ray's dashboard"),
          Map.entry(8888, "Jupyter"),
          Map.entry(10250, "the kubelet"),
          Map.entry(15132, "gpud"),
          Map.entry(20256, "node-problem-detector"),
          Map.entry(29500, "torch.distributed's MASTER_PORT"));

  @Test
  void defaultsLieOutsideTheExporterRangeAndWhatGpuNodesRun() {
    for (int port : List.of(DefaultPorts.ALERTS_HTTP, DefaultPorts.AGENT_HTTP)) {
      // Prometheus' default port allocations fill 9100-9999: any port there is someone's
      assertFalse(port >= 9100 && port <= 9999, port + " is in Prometheus' exporter range");
      assertFalse(TAKEN.containsKey(port), port + " is taken by " + TAKEN.get(port));
      // below Linux's ephemeral range, so an outgoing connection never holds it
      assertTrue(port > 1024 && port < 32768, port + " is not a registered-range port");
    }
  }

  @Test
  void theSettingsDefaultToTheTable() throws Exception {
    Path empty = Files.createTempFile("cudawatch-empty-", ".yaml");
    try {
      Files.writeString(empty, "kafka:\n  bootstrap_servers: k:9092\n");
      var loader = new dev.cudawatch.common.config.ConfigLoader("CUDAWATCH_PORTS_TEST_", Map.of());
      assertEquals(DefaultPorts.ALERTS_HTTP, loader.load(empty, AlertsSettings.class).httpPort());
      assertEquals(DefaultPorts.AGENT_HTTP, loader.load(empty, AgentSettings.class).httpPort());
    } finally {
      Files.delete(empty);
    }
  }

  @Test
  void deploymentFilesUseTheDefaultPorts() throws IOException {
    Pattern httpPort = Pattern.compile("http_port:\\s*(\\d+)");
    List<String> wrong = new ArrayList<>();
    for (Path f : deploymentFiles()) {
      String text = Files.readString(f);
      if (Pattern.compile("\\b940[01]\\b").matcher(text).find()) {
        wrong.add(Repo.ROOT.relativize(f) + " still names 9400 or 9401");
      }
      Matcher m = httpPort.matcher(text);
      while (m.find()) {
        int port = Integer.parseInt(m.group(1));
        if (port != DefaultPorts.ALERTS_HTTP && port != DefaultPorts.AGENT_HTTP) {
          wrong.add(Repo.ROOT.relativize(f) + " sets http_port " + port);
        }
      }
    }
    assertEquals(List.of(), wrong);
  }

  private static List<Path> deploymentFiles() throws IOException {
    List<Path> out =
        new ArrayList<>(List.of(Repo.path("docker-compose.yml"), Repo.path("Dockerfile")));
    try (Stream<Path> s = Files.walk(Repo.path("deploy"))) {
      s.filter(Files::isRegularFile)
          .filter(p -> !p.toString().contains("node_modules"))
          .filter(p -> !p.getFileName().toString().endsWith("-lock.json"))
          .forEach(out::add);
    }
    return out;
  }
}
