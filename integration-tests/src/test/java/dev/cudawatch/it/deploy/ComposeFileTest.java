package dev.cudawatch.it.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cudawatch.alerts.AlertsSettings;
import dev.cudawatch.common.config.ConfigLoader;
import dev.cudawatch.ingest.AgentSettings;
import dev.cudawatch.processor.config.ProcessorSettings;
import java.nio.file.Files;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docker-compose.yml checked piece by piece, fast: (ComposeStackIT runs it under podman-compose
 * with -Pcompose) every file it mounts exists, images are pinned, build targets exist in the
 * Dockerfile, host ports are unique, and the services' config files load into the applications' own
 * config types (unknown keys are errors there) with ports that match the scrape config.
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
    assertEquals("apache/kafka:4.2.2", services().get("kafka").get("image").asText());
    assertTrue(dockerfile.contains("ARG FLINK_BASE=flink:2.2.1-java17"), "FLINK_BASE");
    assertTrue(dockerfile.contains("FROM ${FLINK_BASE} AS processor"), "processor on FLINK_BASE");
    assertTrue(dockerfile.contains("ARG BASE=debian:bookworm-slim"), "BASE");
    // the images are made from the release tarball (its jlink runtime included), not a Maven stage
    assertTrue(
        dockerfile.contains("ADD dist/target/cudawatch-*-linux-x86_64.tar.gz"), "the release");
    assertFalse(dockerfile.contains("RUN ./mvnw"), "no Maven build in the Dockerfile");
    for (String jar :
        List.of(
            "cudawatch-agent.jar",
            "cudawatch-alerts.jar",
            "cudawatch-local.jar",
            "cudawatch-processor.jar")) {
      assertTrue(dockerfile.contains("/opt/cudawatch/lib/" + jar), jar);
    }
    // the podman override swaps image names and nothing else, for every service but Grafana
    JsonNode override = Repo.yaml("deploy/compose/podman-override.yml").get("services");
    for (var s : override.properties()) {
      assertTrue(services().has(s.getKey()), "override names an unknown service " + s.getKey());
      List<String> keys = new java.util.ArrayList<>();
      s.getValue().fieldNames().forEachRemaining(keys::add);
      assertEquals(List.of("image"), keys, s.getKey() + " overrides more than its image");
      if (services().get(s.getKey()).has("build")) {
        assertEquals(
            "localhost/" + services().get(s.getKey()).get("image").asText(),
            s.getValue().get("image").asText(),
            s.getKey() + ": the image build-images.sh tags");
      }
    }
    Set<String> overridden = new HashSet<>();
    override.fieldNames().forEachRemaining(overridden::add);
    Set<String> all = new HashSet<>();
    services().fieldNames().forEachRemaining(all::add);
    all.remove("grafana");
    assertEquals(all, overridden);
  }

  @Test
  void hostPortsAreUniqueAndBoundToLoopback() {
    Set<String> seen = new HashSet<>();
    for (var s : services().properties()) {
      for (JsonNode p : s.getValue().path("ports")) {
        String[] parts = p.asText().split(":");
        assertEquals(3, parts.length, s.getKey() + ": " + p.asText() + " names no host address");
        // Flink's REST API takes jars (code execution); none of these has authentication
        assertEquals("127.0.0.1", parts[0], s.getKey() + " publishes " + p.asText());
        assertTrue(seen.add(parts[1]), "host port " + parts[1] + " published twice");
      }
    }
    assertEquals(Set.of("8081", "7460", "9090", "9093", "3000"), seen);
  }

  @Test
  void everyServiceHasAHealthcheckAndRestartsByItself() {
    for (var s : services().properties()) {
      JsonNode svc = s.getValue();
      assertEquals("unless-stopped", svc.path("restart").asText(), s.getKey() + ": restart");
      JsonNode test = svc.path("healthcheck").path("test");
      assertTrue(test.isArray() && test.size() >= 2, s.getKey() + ": no healthcheck");
      assertFalse(svc.path("healthcheck").path("disable").asBoolean(false), s.getKey());
    }
    // services wait for what they need to be healthy, not merely started
    for (String svc : List.of("taskmanager", "job-submitter", "alerts", "agent")) {
      for (var dep : services().get(svc).path("depends_on").properties()) {
        assertEquals(
            "service_healthy",
            dep.getValue().path("condition").asText(),
            svc + " -> " + dep.getKey());
      }
    }
  }

  @Test
  void checkpointsAndSavepointsAreOnAVolumeTheJobManagerAndTaskManagerShare() throws Exception {
    JsonNode flink = Repo.yaml("deploy/flink/config.yaml").path("execution").path("checkpointing");
    String checkpoints = flink.path("dir").asText();
    String savepoints = flink.path("savepoint-dir").asText();
    assertTrue(checkpoints.startsWith("file:///opt/flink/data/"), checkpoints);
    assertTrue(savepoints.startsWith("file:///opt/flink/data/"), savepoints);
    JsonNode volumes = COMPOSE.path("volumes");
    for (String svc : List.of("jobmanager", "taskmanager", "job-submitter")) {
      List<String> mounts = new java.util.ArrayList<>();
      services().get(svc).path("volumes").forEach(v -> mounts.add(v.asText()));
      assertTrue(
          mounts.stream().anyMatch(m -> m.startsWith("flink-data:/opt/flink/data")),
          svc + " mounts " + mounts);
    }
    assertTrue(volumes.has("flink-data"), "flink-data is a named volume");
    // the image's entrypoint rewrites conf/config.yaml: the servers get a copy, never the file
    for (String svc : List.of("jobmanager", "taskmanager")) {
      JsonNode s = services().get(svc);
      s.path("volumes")
          .forEach(
              v ->
                  assertFalse(
                      v.asText().contains(":/opt/flink/conf"),
                      svc + " mounts over the config the entrypoint rewrites: " + v.asText()));
      String entry = s.path("entrypoint").toString();
      assertTrue(
          entry.contains("cp /etc/flink/config.yaml /opt/flink/conf/config.yaml")
              && entry.contains("exec /docker-entrypoint.sh"),
          svc + ": " + entry);
    }
    // the submitter restores from the newest retained checkpoint when the job is gone
    String submit = Files.readString(Repo.path("deploy/compose/submit-job.sh"));
    assertTrue(submit.contains("checkpoints/*/chk-*") && submit.contains("-s \"$latest\""));
    assertTrue(Files.isExecutable(Repo.path("deploy/compose/submit-job.sh")));
  }

  @Test
  void theLocalImageRunsWhereItsUserCanWrite() throws Exception {
    String dockerfile = Files.readString(Repo.path("Dockerfile"));
    // the local image runs where its user can write, with its data and logs there
    String local = dockerfile.substring(dockerfile.indexOf("AS local"));
    assertTrue(local.contains("WORKDIR /var/lib/cudawatch"), local);
    assertTrue(local.contains("--logs\", \"/var/lib/cudawatch/logs"), local);
    // the build context is the release alone
    assertEquals(
        List.of("*", "!dist/target/cudawatch-*-linux-x86_64.tar.gz"),
        Files.readAllLines(Repo.path(".dockerignore")).stream()
            .filter(l -> !l.isBlank() && !l.startsWith("#"))
            .toList());
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
        Files.readString(Repo.path("deploy/compose/submit-job.sh"))
            .contains("--config /etc/cudawatch/processor.yaml"));
    assertTrue(
        services()
            .get("job-submitter")
            .path("volumes")
            .toString()
            .contains("./deploy/compose/processor.yaml:/etc/cudawatch/processor.yaml:ro"));
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
