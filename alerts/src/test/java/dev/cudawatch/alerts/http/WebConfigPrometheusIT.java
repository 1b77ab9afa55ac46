package dev.cudawatch.alerts.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.alerts.AlertsService;
import dev.cudawatch.alerts.AlertsSettings;
import dev.cudawatch.alerts.RealPrometheus;
import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.kafka.embedded.EmbeddedKafkaBroker;
import dev.cudawatch.testkit.Await;
import dev.cudawatch.testkit.SelfSignedCertificate;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.security.crypto.bcrypt.BCrypt;

/**
 * The alerts service behind TLS and basic auth from a web-config file in the exporter-toolkit
 * format, scraped by a real Prometheus (Debian's package) with {@code scheme: https}, the
 * certificate as its CA and the user's password: Prometheus reports the target up, and requests
 * without credentials, with a wrong password or in plain HTTP are refused.
 */
class WebConfigPrometheusIT {
  private static final String USER = "prometheus";
  private static final String PASSWORD = "s3cret-scrape";

  @TempDir Path dir;

  @Test
  void prometheusScrapesOverTlsWithBasicAuthAndOthersAreRefused() throws Exception {
    Path cert = dir.resolve("cert.pem");
    SelfSignedCertificate.write(cert, dir.resolve("key.pem"));
    Path web = dir.resolve("web-config.yml");
    Files.writeString(
        web,
        "tls_server_config:\n"
            + "  cert_file: cert.pem\n" // relative to the web-config, as in exporter-toolkit
            + "  key_file: key.pem\n"
            + "  min_version: TLS12\n"
            + "basic_auth_users:\n"
            + "  "
            + USER
            + ": '"
            + BCrypt.hashpw(PASSWORD, BCrypt.gensalt(10))
            + "'\n");
    String nobody = "127.0.0.1:" + EmbeddedKafkaBroker.freePort(); // the HTTP side needs no broker
    AlertsSettings s =
        AlertsSettings.builder()
            .kafka(new KafkaSettings(nobody, Map.of()))
            .httpPort(0)
            .webConfigFile(web.toString())
            .build();
    try (AlertsService svc = new AlertsService(s, new Health(), null, Clock.systemUTC())) {
      svc.start();
      int port = svc.httpPort();
      String base = "https://127.0.0.1:" + port;
      HttpClient https =
          HttpClient.newBuilder()
              .sslContext(SelfSignedCertificate.trusting(cert))
              .connectTimeout(Duration.ofSeconds(5))
              .build();

      HttpResponse<String> anonymous = https.send(get(base + "/metrics", null), body());
      assertEquals(401, anonymous.statusCode());
      assertTrue(
          anonymous.headers().firstValue("WWW-Authenticate").orElse("").startsWith("Basic "),
          anonymous.headers().map().toString());
      assertEquals(401, https.send(get(base + "/healthz", null), body()).statusCode());
      assertEquals(401, https.send(get(base + "/metrics", "wrong"), body()).statusCode());
      HttpResponse<String> ok = https.send(get(base + "/metrics", PASSWORD), body());
      assertEquals(200, ok.statusCode());
      assertTrue(ok.body().contains("cudawatch_build_info"), ok.body());
      // the JVM's and the process's own series, beside the service's
      assertTrue(ok.body().contains("\njvm_memory_used_bytes{"), ok.body());
      assertTrue(ok.body().contains("\njvm_threads_current "), ok.body());
      assertTrue(ok.body().contains("\nprocess_cpu_seconds_total "), ok.body());
      assertTrue(ok.body().contains("\nprocess_open_fds "), ok.body());
      // plain HTTP on the TLS port gets no metrics
      HttpClient plain = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
      int plainStatus;
      try {
        plainStatus =
            plain.send(get("http://127.0.0.1:" + port + "/metrics", PASSWORD), body()).statusCode();
      } catch (java.io.IOException refused) {
        plainStatus = -1; // the TLS handshake failed and the connection closed
      }
      assertTrue(plainStatus == -1 || plainStatus == 400, "plain HTTP answered " + plainStatus);

      RealPrometheus prom =
          RealPrometheus.startWithScrapeConfigs(
              dir,
              "  - job_name: cudawatch-alerts\n"
                  + "    scheme: https\n"
                  + "    tls_config:\n"
                  + "      ca_file: "
                  + cert
                  + "\n"
                  + "    basic_auth:\n"
                  + "      username: "
                  + USER
                  + "\n"
                  + "      password: "
                  + PASSWORD
                  + "\n"
                  + "    static_configs:\n"
                  + "      - targets: ['127.0.0.1:"
                  + port
                  + "']\n");
      try {
        HttpClient http = HttpClient.newHttpClient();
        Await.until(
            "Prometheus to scrape the alerts service over TLS with basic auth (up == 1)",
            () -> {
              assertTrue(prom.isAlive(), "prometheus exited; see " + dir.resolve("prometheus.log"));
              return query(http, prom.url(), "up{job=\"cudawatch-alerts\"} == 1");
            },
            r -> r.contains("\"value\""),
            Duration.ofSeconds(120));
        // and what it scraped is the service's: its own series and the JVM's
        Await.until(
            "the scraped series to include the JVM's and the process's",
            () -> query(http, prom.url(), "count({__name__=~\"(jvm|process)_.*\"}) > 10"),
            r -> r.contains("\"value\""),
            Duration.ofSeconds(60));
      } finally {
        prom.close();
      }
    }
  }

  private static String query(HttpClient http, String promUrl, String promql) {
    try {
      return http.send(
              HttpRequest.newBuilder(
                      URI.create(
                          promUrl
                              + "/api/v1/query?query="
                              + URLEncoder.encode(promql, StandardCharsets.UTF_8)))
                  .timeout(Duration.ofSeconds(5))
                  .build(),
              HttpResponse.BodyHandlers.ofString())
          .body();
    } catch (Exception e) {
      return "not yet: " + e; // Prometheus still starting
    }
  }

  private static HttpRequest get(String url, String password) {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10));
    if (password != null) {
      String pair = USER + ":" + password;
      b.header(
          "Authorization",
          "Basic " + Base64.getEncoder().encodeToString(pair.getBytes(StandardCharsets.UTF_8)));
    }
    return b.build();
  }

  private static HttpResponse.BodyHandler<String> body() {
    return HttpResponse.BodyHandlers.ofString();
  }
}
