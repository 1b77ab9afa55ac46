package dev.cudawatch.it.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cudawatch.alerts.AlertsSettings;
import dev.cudawatch.common.config.ConfigLoader;
import dev.cudawatch.ingest.AgentSettings;
import dev.cudawatch.processor.config.ProcessorSettings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The Kubernetes manifests, checked without a cluster: every document has the fields its kind
 * requires, selectors match their pods' labels, mounts name declared volumes, probes and monitors
 * name declared ports, the config in each ConfigMap loads into the application's own config type,
 * and the FlinkDeployment starts a class that exists.
 */
class KubernetesManifestsTest {
  /** Kinds without a namespace. */
  static final Set<String> CLUSTER_SCOPED =
      Set.of("Namespace", "ClusterRole", "ClusterRoleBinding");

  private static List<JsonNode> all() throws Exception {
    List<JsonNode> docs = new ArrayList<>();
    try (Stream<Path> files = Files.list(Repo.path("deploy/k8s/base"))) {
      for (Path f :
          files
              .filter(p -> p.toString().endsWith(".yaml"))
              .filter(p -> !p.endsWith("kustomization.yaml"))
              .sorted()
              .toList()) {
        docs.addAll(Repo.documents(f));
      }
    }
    return docs;
  }

  private static JsonNode find(List<JsonNode> docs, String kind, String name) {
    return docs.stream()
        .filter(d -> d.path("kind").asText().equals(kind))
        .filter(d -> d.path("metadata").path("name").asText().equals(name))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no " + kind + " " + name));
  }

  @Test
  void everyDocumentHasTheFieldsItsKindRequires() throws Exception {
    List<JsonNode> docs = all();
    assertTrue(docs.size() >= 10, "manifests: " + docs.size());
    for (JsonNode d : docs) {
      String kind = d.path("kind").asText();
      String where = kind + " " + d.path("metadata").path("name").asText();
      assertFalse(d.path("apiVersion").asText().isEmpty(), where + ": apiVersion");
      assertFalse(kind.isEmpty(), where + ": kind");
      assertFalse(d.path("metadata").path("name").asText().isEmpty(), where + ": metadata.name");
      if (!CLUSTER_SCOPED.contains(kind)) {
        assertEquals("cudawatch", d.path("metadata").path("namespace").asText(), where);
      }
      switch (kind) {
        case "DaemonSet", "Deployment" -> workload(where, d);
        case "Service" -> assertFalse(d.path("spec").path("ports").isEmpty(), where + ": ports");
        case "ConfigMap" -> assertFalse(d.path("data").isEmpty(), where + ": data");
        case "PersistentVolumeClaim" ->
            assertFalse(
                d.path("spec").path("resources").path("requests").path("storage").isMissingNode(),
                where);
        case "ServiceMonitor", "PodMonitor" -> {
          assertFalse(d.path("spec").path("selector").isMissingNode(), where + ": selector");
          // kube-prometheus-stack's Prometheus selects monitors and rules by this label
          assertFalse(d.at("/metadata/labels/release").asText().isEmpty(), where + ": release");
        }
        case "PrometheusRule" ->
            assertFalse(d.at("/metadata/labels/release").asText().isEmpty(), where + ": release");
        case "NetworkPolicy" ->
            assertFalse(d.at("/spec/podSelector/matchLabels").isEmpty(), where + ": podSelector");
        case "FlinkDeployment",
            "Namespace",
            "ServiceAccount",
            "Role",
            "RoleBinding",
            "ClusterRole",
            "ClusterRoleBinding" -> {}
        default -> throw new AssertionError("unchecked kind " + kind);
      }
    }
  }

  private static void workload(String where, JsonNode d) {
    JsonNode spec = d.get("spec");
    JsonNode podLabels = spec.path("template").path("metadata").path("labels");
    spec.path("selector")
        .path("matchLabels")
        .properties()
        .forEach(
            e ->
                assertEquals(
                    e.getValue().asText(),
                    podLabels.path(e.getKey()).asText(),
                    where + ": the selector must match the pod labels"));
    JsonNode pod = spec.path("template").path("spec");
    Set<String> volumes = new HashSet<>();
    pod.path("volumes").forEach(v -> volumes.add(v.get("name").asText()));
    assertFalse(pod.path("containers").isEmpty(), where + ": containers");
    for (JsonNode c : pod.path("containers")) {
      assertFalse(c.path("name").asText().isEmpty(), where + ": container name");
      assertTrue(c.path("image").asText().matches("[^:]+:[^:]+"), where + ": pinned image");
      Set<String> ports = new HashSet<>();
      c.path("ports").forEach(p -> ports.add(p.path("name").asText()));
      for (JsonNode m : c.path("volumeMounts")) {
        assertTrue(volumes.contains(m.get("name").asText()), where + ": mount " + m.get("name"));
      }
      for (String probe : List.of("readinessProbe", "livenessProbe")) {
        JsonNode port = c.path(probe).path("httpGet").path("port");
        if (!port.isMissingNode()) {
          assertTrue(ports.contains(port.asText()), where + ": " + probe + " port " + port);
        }
      }
    }
  }

  @Test
  void theAlertsServiceMayReadNodesAndPatchTheirStatusAndNothingElse() throws Exception {
    List<JsonNode> docs = all();
    JsonNode role = find(docs, "ClusterRole", "cudawatch-alerts-node-conditions");
    // node-problem-detector's rights for its conditions; no update of nodes (that would allow a
    // cordon), no pods/eviction (a drain), no delete
    assertEquals(
        "[{\"apiGroups\":[\"\"],\"resources\":[\"nodes\"],\"verbs\":[\"get\"]},"
            + "{\"apiGroups\":[\"\"],\"resources\":[\"nodes/status\"],\"verbs\":[\"patch\"]}]",
        role.get("rules").toString());
    JsonNode binding = find(docs, "ClusterRoleBinding", "cudawatch-alerts-node-conditions");
    assertEquals("cudawatch-alerts-node-conditions", binding.at("/roleRef/name").asText());
    String account =
        find(docs, "Deployment", "cudawatch-alerts")
            .at("/spec/template/spec/serviceAccountName")
            .asText();
    assertEquals(account, binding.at("/subjects/0/name").asText());
    assertEquals("cudawatch", binding.at("/subjects/0/namespace").asText());
    find(docs, "ServiceAccount", account);
    // pod Events: create one and patch its series, nothing else (no pods, no core events' delete)
    assertEquals(
        "[{\"apiGroups\":[\"events.k8s.io\"],\"resources\":[\"events\"],"
            + "\"verbs\":[\"create\",\"patch\"]}]",
        find(docs, "ClusterRole", "cudawatch-alerts-pod-events").get("rules").toString());
    JsonNode events = find(docs, "ClusterRoleBinding", "cudawatch-alerts-pod-events");
    assertEquals("cudawatch-alerts-pod-events", events.at("/roleRef/name").asText());
    assertEquals(account, events.at("/subjects/0/name").asText());
  }

  @Test
  void theConfigMapsHoldValidApplicationConfig() throws Exception {
    List<JsonNode> docs = all();
    String agent =
        find(docs, "ConfigMap", "cudawatch-agent").get("data").get("agent.yaml").asText();
    String processor =
        find(docs, "ConfigMap", "cudawatch-processor").get("data").get("processor.yaml").asText();
    String alerts =
        find(docs, "ConfigMap", "cudawatch-alerts").get("data").get("alerts.yaml").asText();
    AgentSettings a =
        new ConfigLoader("CUDAWATCH_AGENT", Map.of("CUDAWATCH_AGENT_HOST", "gpu-node-1"))
            .load(Repo.temp(agent), AgentSettings.class);
    assertEquals("/dev/kmsg", a.kernelLog());
    assertEquals("gpu-node-1", a.host(), "the DaemonSet sets the host from the node name");
    // container logs are followed in the runtime's CRI format, from the read-only hostPath mount
    assertEquals(
        List.of("/var/log/pods/*/*/*.log"),
        dev.cudawatch.ingest.FileGlob.paths(a.files(), dev.cudawatch.ingest.FileGlob.Format.CRI));
    assertTrue(
        find(docs, "DaemonSet", "cudawatch-agent")
            .at("/spec/template/spec/containers/0/volumeMounts")
            .toString()
            .contains("\"mountPath\":\"/var/log/pods\""),
        "the agent mounts /var/log/pods");
    new ConfigLoader("CUDAWATCH_PROCESSOR", Map.of())
        .load(Repo.temp(processor), ProcessorSettings.class);
    Map<String, String> env = new HashMap<>();
    env.put(
        "CUDAWATCH_ALERTS_NOTIFICATIONS__SLACK_WEBHOOK_URL",
        "https://hooks.slack.com/services/T/B/x");
    AlertsSettings al =
        new ConfigLoader("CUDAWATCH_ALERTS", env).load(Repo.temp(alerts), AlertsSettings.class);
    assertEquals("https://hooks.slack.com/services/T/B/x", al.notifications().slackWebhookUrl());
    assertFalse(al.nodeConditions().enabled(), "the hand-off is observe-only unless enabled");

    // the env variables the manifests set are the ones the loader reads
    JsonNode agentEnv =
        find(docs, "DaemonSet", "cudawatch-agent").at("/spec/template/spec/containers/0/env");
    assertEquals("CUDAWATCH_AGENT_HOST", agentEnv.get(0).get("name").asText());
    JsonNode alertsEnv =
        find(docs, "Deployment", "cudawatch-alerts").at("/spec/template/spec/containers/0/env");
    assertEquals(
        "CUDAWATCH_ALERTS_NOTIFICATIONS__SLACK_WEBHOOK_URL", alertsEnv.get(0).get("name").asText());
  }

  @Test
  void onlyMonitoringAndTheNamespaceItselfReachTheAlertsService() throws Exception {
    List<JsonNode> docs = all();
    JsonNode policy = find(docs, "NetworkPolicy", "cudawatch-alerts");
    JsonNode pods =
        find(docs, "Deployment", "cudawatch-alerts").at("/spec/template/metadata/labels");
    policy
        .at("/spec/podSelector/matchLabels")
        .properties()
        .forEach(e -> assertEquals(e.getValue().asText(), pods.path(e.getKey()).asText()));
    assertEquals("[\"Ingress\"]", policy.at("/spec/policyTypes").toString());
    JsonNode ingress = policy.at("/spec/ingress");
    assertEquals(2, ingress.size(), ingress.toString());
    String monitoring = ingress.get(0).toString();
    assertTrue(
        monitoring.contains("\"kubernetes.io/metadata.name\"")
            && monitoring.contains("[\"monitoring\"]")
            && monitoring.contains("[\"prometheus\",\"alertmanager\"]"),
        monitoring);
    assertEquals("{}", ingress.get(1).at("/from/0/podSelector").toString());
    assertTrue(ingress.get(1).at("/from/0/namespaceSelector").isMissingNode(), "same namespace");
    for (JsonNode rule : ingress) {
      assertEquals("http", rule.at("/ports/0/port").asText(), rule.toString());
    }
  }

  /**
   * The example overlay's TLS: its web-config loads strictly, and the passwords that Prometheus
   * (its Secret) and the probes (their header) send match the bcrypt hashes in it.
   */
  @Test
  void theExampleOverlaysWebConfigAcceptsThePrometheusAndProbeCredentials() throws Exception {
    Path overlay = Repo.path("deploy/k8s/overlays/example");
    List<JsonNode> patch = Repo.documents(overlay.resolve("alerts-tls.yaml"));
    String web = find(patch, "ConfigMap", "cudawatch-alerts").at("/data/web-config.yml").asText();
    var file =
        new ConfigLoader("UNUSED", Map.of())
            .load(Repo.temp(web), dev.cudawatch.common.http.WebConfig.File.class);
    assertEquals(
        "/etc/cudawatch/tls/tls.crt", file.tlsServerConfig().certFile(), "the Secret's mount");
    JsonNode deploy = find(patch, "Deployment", "cudawatch-alerts");
    assertEquals(
        "/etc/cudawatch/web-config.yml",
        deploy.at("/spec/template/spec/containers/0/env/0/value").asText());
    assertEquals(
        "CUDAWATCH_ALERTS_WEB_CONFIG_FILE",
        deploy.at("/spec/template/spec/containers/0/env/0/name").asText());
    String header =
        deploy
            .at("/spec/template/spec/containers/0/readinessProbe/httpGet/httpHeaders/0/value")
            .asText();
    String[] probe =
        new String(
                java.util.Base64.getDecoder().decode(header.substring("Basic ".length())),
                java.nio.charset.StandardCharsets.UTF_8)
            .split(":", 2);
    assertTrue(
        org.springframework.security.crypto.bcrypt.BCrypt.checkpw(
            probe[1], file.basicAuthUsers().get(probe[0])),
        "the probes' password matches user " + probe[0]);
    JsonNode scrape =
        find(
            Repo.documents(overlay.resolve("alerts-tls-secrets.yaml")),
            "Secret",
            "cudawatch-alerts-scrape");
    assertTrue(
        org.springframework.security.crypto.bcrypt.BCrypt.checkpw(
            scrape.at("/stringData/password").asText(),
            file.basicAuthUsers().get(scrape.at("/stringData/username").asText())),
        "Prometheus' password matches its user");
  }

  @Test
  void monitorsAndServicesPointAtRealPortsAndPods() throws Exception {
    List<JsonNode> docs = all();
    JsonNode svc = find(docs, "Service", "cudawatch-alerts");
    JsonNode deploy = find(docs, "Deployment", "cudawatch-alerts");
    svc.get("spec")
        .get("selector")
        .properties()
        .forEach(
            e ->
                assertEquals(
                    e.getValue().asText(),
                    deploy.at("/spec/template/metadata/labels").path(e.getKey()).asText()));
    String monitored =
        find(docs, "ServiceMonitor", "cudawatch-alerts").at("/spec/endpoints/0/port").asText();
    assertEquals(monitored, svc.at("/spec/ports/0/name").asText());
    String podPort =
        find(docs, "PodMonitor", "cudawatch-agent").at("/spec/podMetricsEndpoints/0/port").asText();
    assertEquals(
        podPort,
        find(docs, "DaemonSet", "cudawatch-agent")
            .at("/spec/template/spec/containers/0/ports/0/name")
            .asText());
  }

  @Test
  void theAgentReadsTheKernelLogAsNodeProblemDetectorDoesAndTheAlertsVolumeIsWritable()
      throws Exception {
    List<JsonNode> docs = all();
    JsonNode agent = find(docs, "DaemonSet", "cudawatch-agent").at("/spec/template/spec");
    JsonNode sc = agent.at("/containers/0/securityContext");
    // /dev/kmsg is not exposed to unprivileged containers; CAP_SYSLOG as non-root reads nothing
    assertTrue(sc.path("privileged").asBoolean(), "the agent's container must be privileged");
    assertEquals(0, sc.path("runAsUser").asInt(-1), "and run as root");
    assertTrue(sc.path("readOnlyRootFilesystem").asBoolean());
    assertTrue(agent.toString().contains("\"path\":\"/dev/kmsg\""), "kmsg from the host");

    JsonNode alerts = find(docs, "Deployment", "cudawatch-alerts").at("/spec/template/spec");
    String dockerfile = Files.readString(Repo.path("Dockerfile"));
    assertTrue(dockerfile.contains("--uid 10001 cudawatch"));
    assertEquals(10001, alerts.at("/securityContext/runAsUser").asInt());
    assertEquals(10001, alerts.at("/securityContext/fsGroup").asInt(), "the PVC is writable");
    // liveness must not follow readiness: a Kafka outage makes /healthz 503 (not ready), and
    // restarting the pod for it would help nothing
    JsonNode c = alerts.at("/containers/0");
    assertEquals("/healthz", c.at("/readinessProbe/httpGet/path").asText());
    assertFalse(c.at("/livenessProbe").isMissingNode());
    assertFalse(c.at("/livenessProbe/httpGet/path").asText().equals("/healthz"), "liveness");
  }

  @Test
  void theFlinkDeploymentCarriesTheSameFlinkConfigAsComposeAndTheCluster() throws Exception {
    JsonNode fd = find(all(), "FlinkDeployment", "cudawatch-processor");
    Map<String, String> k8s = new HashMap<>();
    fd.at("/spec/flinkConfiguration")
        .properties()
        .forEach(e -> k8s.put(e.getKey(), e.getValue().asText()));
    Map<String, String> file = new HashMap<>();
    flatten("", Repo.yaml("deploy/flink/config.yaml"), file);
    // what differs by environment: where the JobManager is and how big the processes are (the
    // operator sets those from the resource itself)
    Set<String> perEnvironment =
        Set.of(
            "jobmanager.rpc.address",
            "rest.address",
            "rest.bind-address",
            "jobmanager.memory.process.size",
            "taskmanager.memory.process.size",
            "parallelism.default");
    Set<String> kubernetesOnly = Set.of("high-availability.type", "high-availability.storageDir");
    for (var e : file.entrySet()) {
      if (!perEnvironment.contains(e.getKey())) {
        assertEquals(e.getValue(), k8s.get(e.getKey()), "flinkConfiguration " + e.getKey());
      }
    }
    for (String k : k8s.keySet()) {
      assertTrue(file.containsKey(k) || kubernetesOnly.contains(k), k + " is not in config.yaml");
    }
    // no S3 without its plugin: checkpoints on the shared volume every Flink pod mounts
    assertTrue(k8s.get("execution.checkpointing.dir").startsWith("file:///opt/flink/data/"));
    assertTrue(
        fd.at("/spec/podTemplate/spec/containers/0/volumeMounts")
            .toString()
            .contains("/opt/flink/data"));
    JsonNode pvc = find(all(), "PersistentVolumeClaim", "cudawatch-flink-data");
    assertEquals("ReadWriteMany", pvc.at("/spec/accessModes/0").asText());
  }

  private static void flatten(String prefix, JsonNode n, Map<String, String> out) {
    if (n.isObject()) {
      n.properties().forEach(e -> flatten(prefix + e.getKey() + ".", e.getValue(), out));
    } else {
      out.put(prefix.substring(0, prefix.length() - 1), n.asText());
    }
  }

  @Test
  void theFlinkDeploymentRunsTheJobFromItsImage() throws Exception {
    JsonNode fd = find(all(), "FlinkDeployment", "cudawatch-processor");
    JsonNode job = fd.at("/spec/job");
    assertEquals("local:///opt/flink/usrlib/cudawatch-processor.jar", job.get("jarURI").asText());
    Class.forName(job.get("entryClass").asText()); // the class exists
    assertTrue(
        Set.of("savepoint", "last-state", "stateless").contains(job.get("upgradeMode").asText()));
    assertTrue(fd.at("/spec/flinkVersion").asText().startsWith("v2_"));
    assertTrue(
        Files.readString(Repo.path("Dockerfile"))
            .contains("/opt/flink/usrlib/cudawatch-processor.jar"),
        "the image puts the jar where the deployment looks");
  }
}
