package dev.cudawatch.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.testkit.SelfSignedCertificate;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import javax.net.ssl.SSLParameters;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent's endpoint over TLS from its {@code web_config_file} (the JDK's server, no Jetty): a
 * client that trusts the certificate gets /healthz and /metrics; the configured minimum version
 * holds (a TLS 1.2 client is refused when the minimum is 1.3); plain HTTP gets no health.
 */
class AgentTlsIT {
  @TempDir Path dir;

  @Test
  void servesOverTlsAtTheConfiguredVersionsOnly() throws Exception {
    Path cert = dir.resolve("cert.pem");
    SelfSignedCertificate.write(cert, dir.resolve("key.pem"));
    Path web = dir.resolve("web-config.yml");
    Files.writeString(
        web,
        "tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\n  min_version: TLS13\n");
    AgentSettings s = HttpOnlyAgent.settings(dir).webConfigFile(web.toString()).build();
    try (AgentRuntime agent = new AgentRuntime(s, Clock.systemUTC())) {
      agent.start(false);
      String base = "https://127.0.0.1:" + agent.httpPort();
      HttpClient https =
          HttpClient.newBuilder()
              .sslContext(SelfSignedCertificate.trusting(cert))
              .connectTimeout(Duration.ofSeconds(5))
              .build();
      HttpResponse<String> h =
          https.send(get(base + "/healthz"), HttpResponse.BodyHandlers.ofString());
      assertEquals(200, h.statusCode(), h.body());
      assertTrue(h.body().contains("\"status\":\"ok\""), h.body());
      HttpResponse<String> m =
          https.send(get(base + "/metrics"), HttpResponse.BodyHandlers.ofString());
      assertEquals(200, m.statusCode());
      assertTrue(m.body().contains("cudawatch_agent_healthy 1"), m.body());

      SSLParameters tls12 = new SSLParameters();
      tls12.setProtocols(new String[] {"TLSv1.2"});
      HttpClient old =
          HttpClient.newBuilder()
              .sslContext(SelfSignedCertificate.trusting(cert))
              .sslParameters(tls12)
              .connectTimeout(Duration.ofSeconds(5))
              .build();
      assertThrows(
          IOException.class,
          () -> old.send(get(base + "/healthz"), HttpResponse.BodyHandlers.ofString()),
          "TLS 1.2 below the configured minimum");

      HttpClient plain = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
      String http = "http://127.0.0.1:" + agent.httpPort() + "/healthz";
      try {
        HttpResponse<String> p = plain.send(get(http), HttpResponse.BodyHandlers.ofString());
        assertTrue(!p.body().contains("\"status\""), "plain HTTP got health: " + p.body());
      } catch (IOException refused) {
        // the TLS port closes a plain connection: refused as it should be
      }
    }
  }

  private static HttpRequest get(String url) {
    return HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5)).build();
  }
}
