package dev.cudawatch.alerts.handoff;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cudawatch.alerts.store.GpuHealthStore;
import dev.cudawatch.common.wire.Action;
import dev.cudawatch.testkit.Await;
import dev.cudawatch.testkit.StepClock;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.FileInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The node-condition writer against {@link ApiServerDouble}: a real HTTP(S) server with the API
 * server's auth, status-subresource and strategic-merge-patch behaviour (no kube-apiserver can run
 * on this machine, and nothing but package registries can be reached).
 */
class NodeConditionWriterIT {
  private static final Instant T0 = Instant.parse("2026-11-22T03:00:00Z");
  private static final String TYPE = "CudawatchGpuProblem";
  private static final String TOKEN = "s3cret-token";

  @TempDir Path dir;
  private final GpuHealthStore gpus = new GpuHealthStore(100);
  private final PrometheusRegistry registry = new PrometheusRegistry();
  private final StepClock clock = new StepClock(T0);
  private ApiServerDouble api;
  private NodeConditionWriter writer;

  @BeforeEach
  void start() throws IOException {
    api = new ApiServerDouble(TOKEN, null);
    api.addNode("node-1");
    api.addNode("node-2");
    writer = writer(api.url(), TOKEN, 3_600_000L, registry);
  }

  private NodeConditionWriter writer(
      String url, String token, long heartbeatMs, PrometheusRegistry registry) throws IOException {
    Path tokenFile = dir.resolve("token-" + token.hashCode());
    Files.writeString(tokenFile, token + "\n");
    return new NodeConditionWriter(
        on(url, tokenFile.toString()).heartbeatIntervalMs(heartbeatMs).build(),
        gpus,
        100,
        registry,
        clock);
  }

  /** The hand-off on, against {@code url} with {@code tokenFile}, retrying soon. */
  static NodeConditionSettings.Builder on(String url, String tokenFile) {
    return NodeConditionSettings.builder()
        .enabled(true)
        .apiServerUrl(url)
        .tokenFile(tokenFile)
        .retryInitialMs(50L);
  }

  @AfterEach
  void stop() throws InterruptedException {
    writer.close();
    api.close();
  }

  static Action rec(String id, String what, String host, String gpu, int level, Instant at) {
    return new Action(
        1,
        id,
        Action.RECOMMENDATION,
        what,
        "because " + id,
        host,
        gpu,
        "GPU-" + gpu,
        "job-1",
        79,
        "inc-" + id,
        level,
        1,
        1,
        null,
        at,
        null);
  }

  private String metrics() throws IOException {
    return metrics(registry);
  }

  private static String metrics(PrometheusRegistry registry) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    PrometheusTextFormatWriter.builder()
        .setIncludeCreatedTimestamps(false)
        .build()
        .write(out, registry.scrape());
    return out.toString(StandardCharsets.UTF_8);
  }

  @Test
  void aRecommendationBecomesATrueConditionBesideTheKubeletsOwn() throws Exception {
    gpus.add(rec("r1", "reset_gpu", "node-1", "0", 0, T0));
    assertTrue(writer.write("node-1"));
    JsonNode c = api.condition("node-1", TYPE);
    assertEquals("True", c.get("status").asText());
    assertEquals("GpuResetRecommended", c.get("reason").asText());
    assertTrue(c.get("message").asText().contains("GPU 0 (GPU-0): reset_gpu"), c.toString());
    assertTrue(c.get("message").asText().contains("observe-only"), c.toString());
    assertEquals("2026-11-22T03:00:00Z", c.get("lastHeartbeatTime").asText());
    assertEquals("2026-11-22T03:00:00Z", c.get("lastTransitionTime").asText());
    assertNotNull(api.condition("node-1", "Ready"), "the kubelet's condition is kept");
    // it read the node and patched its status: never the spec (no cordon), no eviction, no delete
    assertEquals(
        List.of("GET /api/v1/nodes/node-1", "PATCH /api/v1/nodes/node-1/status"), api.requests());
    assertTrue(metrics().contains("cudawatch_node_condition_writes_total 1.0"));
  }

  @Test
  void theTransitionTimeStaysWhileTheStatusDoesAndMovesWhenItChanges() throws Exception {
    gpus.add(rec("r1", "reset_gpu", "node-2", "1", 0, T0));
    writer.write("node-2");
    clock.set(T0.plusSeconds(300));
    gpus.add(rec("r2", "rma", "node-2", "1", 2, T0.plusSeconds(200)));
    writer.write("node-2");
    JsonNode c = api.condition("node-2", TYPE);
    assertEquals("GpuRmaRecommended", c.get("reason").asText());
    assertEquals("2026-11-22T03:05:00Z", c.get("lastHeartbeatTime").asText());
    assertEquals("2026-11-22T03:00:00Z", c.get("lastTransitionTime").asText());
    // a reset recommendation past its TTL no longer counts; node-1 goes False
    gpus.add(rec("r3", "reset_gpu", "node-1", "0", 0, T0));
    writer.write("node-1");
    clock.set(T0.plus(Duration.ofHours(25)));
    writer.write("node-1");
    JsonNode d = api.condition("node-1", TYPE);
    assertEquals("False", d.get("status").asText());
    assertEquals(NodeCondition.NO_PROBLEM, d.get("reason").asText());
    assertEquals("2026-11-23T04:00:00Z", d.get("lastTransitionTime").asText());
    // an escalated GPU keeps its node True past the TTL
    writer.write("node-2");
    assertEquals("True", api.condition("node-2", TYPE).get("status").asText());
  }

  @Test
  void failedWritesAreRetriedBoundedAndCountedByReason() throws Exception {
    gpus.add(rec("r1", "reset_gpu", "node-1", "0", 0, T0));
    api.failNext.set(2); // two 500s, then the third try succeeds
    assertTrue(writer.write("node-1"));
    api.failNext.set(100);
    assertFalse(writer.write("node-1"));
    api.failNext.set(0);
    assertFalse(writer.write("node-9"));
    int before = api.requests().size();
    assertFalse(writer.write("../node-1/status?x=1"));
    assertEquals(before, api.requests().size(), "an invalid node name reaches no request");
    PrometheusRegistry other = new PrometheusRegistry();
    try (NodeConditionWriter wrongToken = writer(api.url(), "not-the-token", 3_600_000L, other)) {
      assertFalse(wrongToken.write("node-1"));
    }
    assertTrue(
        metrics(other)
            .contains(
                "cudawatch_node_condition_write_failures_total{reason=\"unauthorized\"} 1.0"));
    String m = metrics();
    assertTrue(
        m.contains("cudawatch_node_condition_write_failures_total{reason=\"server_error\"} 1.0"),
        m);
    assertTrue(
        m.contains("cudawatch_node_condition_write_failures_total{reason=\"node_not_found\"} 1.0"),
        m);
    assertTrue(
        m.contains(
            "cudawatch_node_condition_write_failures_total{reason=\"invalid_node_name\"} 1.0"),
        m);
    assertFalse(m.contains(TOKEN));
  }

  @Test
  void theWorkerWritesARecommendedNodeAndHeartbeatsIt() throws Exception {
    writer.close();
    writer = writer(api.url(), TOKEN, 1_000L, new PrometheusRegistry());
    writer.start();
    Action a = rec("r1", "inspect", "node-1", "3", 1, T0);
    gpus.add(a);
    writer.onAction(a);
    Await.until(
        "the node condition written",
        () -> api.condition("node-1", TYPE) != null,
        Duration.ofSeconds(20));
    assertEquals("GpuInspectionRecommended", api.condition("node-1", TYPE).get("reason").asText());
    clock.set(T0.plusSeconds(3600));
    Await.until(
        "a heartbeat",
        () ->
            api.condition("node-1", TYPE)
                .get("lastHeartbeatTime")
                .asText()
                .equals("2026-11-22T04:00:00Z"),
        Duration.ofSeconds(20));
    assertTrue(
        api.requests().stream()
            .allMatch(
                r ->
                    r.equals("GET /api/v1/nodes/node-1")
                        || r.equals("PATCH /api/v1/nodes/node-1/status")),
        api.requests().toString());
  }

  @Test
  void overTlsTheClusterCaIsTrustedAndNoOtherCertificate() throws Exception {
    Path ca = certificate("api");
    Path other = certificate("other");
    try (ApiServerDouble tls = new ApiServerDouble(TOKEN, serverContext(dir.resolve("api.p12")))) {
      tls.addNode("node-1");
      gpus.add(rec("r1", "reset_gpu", "node-1", "0", 0, T0));
      Path tokenFile = dir.resolve("token");
      Files.writeString(tokenFile, TOKEN);
      NodeConditionSettings.Builder on =
          on(tls.url(), tokenFile.toString())
              .heartbeatIntervalMs(3_600_000L)
              .conditionType(TYPE)
              .maxAttempts(1);
      NodeConditionSettings trusted = on.caFile(ca.toString()).build();
      try (NodeConditionWriter w =
          new NodeConditionWriter(trusted, gpus, 10, new PrometheusRegistry(), clock)) {
        assertTrue(w.write("node-1"));
      }
      assertEquals("True", tls.condition("node-1", TYPE).get("status").asText());
      NodeConditionSettings wrongCa = on.caFile(other.toString()).build();
      PrometheusRegistry r = new PrometheusRegistry();
      try (NodeConditionWriter w = new NodeConditionWriter(wrongCa, gpus, 10, r, clock)) {
        assertFalse(w.write("node-1"));
      }
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      PrometheusTextFormatWriter.builder()
          .setIncludeCreatedTimestamps(false)
          .build()
          .write(out, r.scrape());
      assertTrue(
          out.toString(StandardCharsets.UTF_8)
              .contains(
                  "cudawatch_node_condition_write_failures_total{reason=\"unreachable\"} 1.0"));
    }
  }

  /** A self-signed certificate for 127.0.0.1 by the JDK's keytool; returns its PEM. */
  private Path certificate(String name) throws Exception {
    Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
    Path ks = dir.resolve(name + ".p12");
    Path pem = dir.resolve(name + ".pem");
    run(
        keytool.toString(),
        "-genkeypair",
        "-alias",
        name,
        "-keyalg",
        "EC",
        "-groupname",
        "secp256r1",
        "-dname",
        "CN=127.0.0.1",
        "-ext",
        "SAN=ip:127.0.0.1",
        "-validity",
        "3650",
        "-keystore",
        ks.toString(),
        "-storetype",
        "PKCS12",
        "-storepass",
        "changeit",
        "-keypass",
        "changeit");
    run(
        keytool.toString(),
        "-exportcert",
        "-rfc",
        "-alias",
        name,
        "-keystore",
        ks.toString(),
        "-storepass",
        "changeit",
        "-file",
        pem.toString());
    return pem;
  }

  private static void run(String... cmd) throws Exception {
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, p.waitFor(), out);
  }

  private static SSLContext serverContext(Path p12) throws Exception {
    KeyStore ks = KeyStore.getInstance("PKCS12");
    try (FileInputStream in = new FileInputStream(p12.toFile())) {
      ks.load(in, "changeit".toCharArray());
    }
    KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    kmf.init(ks, "changeit".toCharArray());
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(kmf.getKeyManagers(), null, null);
    return ctx;
  }
}
