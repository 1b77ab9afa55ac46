package dev.cudawatch.launcher.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cudawatch.alerts.AlertsSettings;
import dev.cudawatch.common.config.ConfigLoader;
import dev.cudawatch.ingest.AgentSettings;
import dev.cudawatch.processor.ProcessorSettings;
import java.nio.file.Files;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docker-compose.yml cannot be started here (no Docker engine), so it is checked piece by piece:
 * every file it mounts exists, images are pinned, build targets exist in the Dockerfile, host ports
 * are unique, and the services' config files load into the applications' own config types (unknown
 * keys are errors there) with ports that match the scrape config.
 */
class ComposeFileTest {
  private static final JsonNode COMPOSE;

  static {
    try {
      COMPOSE = Repo.yaml("docker-compose.yml");
    } catch (Exception e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private static JsonNode services() {
    return COMPOSE.get("services");
  }

  @Test
  void everyMountedFileExists() {
    for (var s : services().properties()) {
      for (JsonNode v : s.getValue().path("volumes")) {
        String src = v.asText().split(":")[0];
        if (src.startsWith("./")) {
          assertTrue(
              Files.exists(Repo.path(src.substring(2))) || src.equals("./logs"),
              s.getKey() + " mounts " + src + ", which is not in the repository");
        }
      }
    }
  }

  @Test
  void imagesArePinnedAndBuildTargetsExist() throws Exception {
    String dockerfile = Files.readString(Repo.path("Dockerfile"));
    Set<String> targets = new HashSet<>();
    Matcher m = Pattern.compile("(?m)^FROM\\s+\\S+\\s+AS\\s+(\\S+)").matcher(dockerfile);
    while (m.find()) {
      targets.add(m.group(1));
    }
    for (var s : services().properties()) {
      JsonNode svc = s.getValue();
      String image = svc.path("image").asText("");
      assertFalse(image.isEmpty(), s.getKey() + " names no image");
      assertTrue(
          image.matches("[^:]+:[^:]+") && !image.endsWith(":latest"),
          s.getKey() + ": " + image + " is not pinned");
      if (svc.has("build")) {
        String target = svc.get("build").get("target").asText();
        assertTrue(targets.contains(target), s.getKey() + ": no Dockerfile target " + target);
      }
    }
    // the Flink and Kafka versions match the build's
    assertEquals("flink:2.2.1-java17", services().get("jobmanager").get("image").asText());
    assertEquals("apache/kafka:4.2.0", services().get("kafka").get("image").asText());
    assertTrue(dockerfile.contains("FROM flink:2.2.1-java17 AS processor"));
    // the jars the Dockerfile copies are the ones the build makes
    for (String jar :
        List.of(
            "ingest/target/cudawatch-agent.jar",
            "alerts/target/cudawatch-alerts.jar",
            "launcher/target/cudawatch-local.jar",
            "processor/target/cudawatch-processor.jar")) {
      assertTrue(dockerfile.contains("/src/" + jar), jar);
      String module = jar.substring(0, jar.indexOf('/'));
      String name = jar.substring(jar.lastIndexOf('/') + 1, jar.length() - 4);
      assertTrue(
          Files.readString(Repo.path(module + "/pom.xml"))
              .contains("<finalName>" + name + "</finalName>"),
          module + " builds " + name);
    }
  }

  @Test
  void hostPortsAreUnique() {
    Set<String> seen = new HashSet<>();
    for (var s : services().properties()) {
      for (JsonNode p : s.getValue().path("ports")) {
        String host = p.asText().split(":")[0];
        assertTrue(seen.add(host), "host port " + host + " published twice");
      }
    }
  }

  @Test
  void theServicesConfigFilesAreValidApplicationConfig() throws Exception {
    ConfigLoader agent = new ConfigLoader("CUDAWATCH_AGENT", Map.of());
    AgentSettings a = agent.load(Repo.path("deploy/compose/agent.yaml"), AgentSettings.class);
    ProcessorSettings p =
        new ConfigLoader("CUDAWATCH_PROCESSOR", Map.of())
            .load(Repo.path("deploy/compose/processor.yaml"), ProcessorSettings.class);
    AlertsSettings al =
        new ConfigLoader("CUDAWATCH_ALERTS", Map.of())
            .load(Repo.path("deploy/compose/alerts.yaml"), AlertsSettings.class);
    assertEquals("kafka:9092", a.kafka().bootstrapServers());
    assertEquals("kafka:9092", p.kafka().bootstrapServers());
    assertEquals("kafka:9092", al.kafka().bootstrapServers());
    assertEquals("http://alertmanager:9093", al.notifications().alertmanagerUrl());

    // Prometheus scrapes the ports the services listen on, on all interfaces inside the network
    JsonNode prom = Repo.yaml("deploy/prometheus/prometheus.yml");
    Set<String> targets = new HashSet<>();
    for (JsonNode job : prom.get("scrape_configs")) {
      for (JsonNode sc : job.path("static_configs")) {
        sc.path("targets").forEach(t -> targets.add(t.asText()));
      }
    }
    assertTrue(targets.contains("alerts:" + al.httpPort()), targets.toString());
    assertTrue(targets.contains("agent:" + a.httpPort()), targets.toString());
    assertEquals("0.0.0.0", al.httpHost());
    assertEquals("0.0.0.0", a.httpHost());
    assertTrue(services().get("alerts").get("ports").get(0).asText().endsWith(":" + al.httpPort()));
    // every scraped host is a compose service
    for (String t : targets) {
      assertNotNull(services().get(t.split(":")[0]), t);
    }
    // and the config each service is started with is the file checked here
    assertTrue(
        services()
            .get("processor-submit")
            .get("command")
            .asText()
            .contains("--config /etc/cudawatch/processor.yaml"));
    assertEquals(
        "./deploy/compose/alerts.yaml:/etc/cudawatch/alerts.yaml:ro",
        services().get("alerts").get("volumes").get(0).asText());
  }

  @Test
  void theFlinkConfigTurnsOnThePrometheusReporterThatIsScraped() throws Exception {
    JsonNode flink = Repo.yaml("deploy/flink/config.yaml");
    JsonNode prom = flink.path("metrics").path("reporter").path("prom");
    assertEquals(
        "org.apache.flink.metrics.prometheus.PrometheusReporterFactory",
        prom.path("factory").path("class").asText());
    String port = prom.path("port").asText();
    String scrape = Files.readString(Repo.path("deploy/prometheus/prometheus.yml"));
    assertTrue(scrape.contains("jobmanager:" + port) && scrape.contains("taskmanager:" + port));
  }
}
