package dev.cudawatch.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Base64;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.security.crypto.bcrypt.BCrypt;

/**
 * The agent's /metrics and /healthz behind basic auth from its {@code web_config_file}: refused
 * without or with wrong credentials (401, {@code WWW-Authenticate: Basic}), served with them, and
 * /metrics carries the JVM's and the process's series beside the agent's.
 */
class AgentWebConfigIT {
  @TempDir Path dir;

  @Test
  void credentialsAreRequiredAndMetricsHaveJvmAndProcessSeries() throws Exception {
    Path web = dir.resolve("web-config.yml");
    Files.writeString(
        web, "basic_auth_users:\n  scraper: '" + BCrypt.hashpw("pw", BCrypt.gensalt(10)) + "'\n");
    AgentSettings s = HttpOnlyAgent.settings(dir).webConfigFile(web.toString()).build();
    try (AgentRuntime agent = new AgentRuntime(s, Clock.systemUTC())) {
      agent.start(false);
      String base = "http://127.0.0.1:" + agent.httpPort();
      HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

      HttpResponse<String> anonymous = http.send(get(base + "/metrics", null), text());
      assertEquals(401, anonymous.statusCode());
      assertEquals(
          "Basic realm=\"cudawatch\", charset=\"UTF-8\"",
          anonymous.headers().firstValue("WWW-Authenticate").orElse(""));
      assertEquals(401, http.send(get(base + "/healthz", null), text()).statusCode());
      assertEquals(401, http.send(get(base + "/metrics", "wrong"), text()).statusCode());

      assertEquals(200, http.send(get(base + "/healthz", "pw"), text()).statusCode());
      HttpResponse<String> m = http.send(get(base + "/metrics", "pw"), text());
      assertEquals(200, m.statusCode());
      String body = m.body();
      assertTrue(body.contains("cudawatch_agent_healthy 1"), body);
      assertTrue(body.contains("\njvm_memory_used_bytes{"), body);
      assertTrue(body.contains("\njvm_threads_current "), body);
      assertTrue(body.contains("\nprocess_cpu_seconds_total "), body);
      assertTrue(body.contains("\nprocess_open_fds "), body);
    }
  }

  private static HttpRequest get(String url, String password) {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10));
    if (password != null) {
      b.header(
          "Authorization",
          "Basic "
              + Base64.getEncoder()
                  .encodeToString(("scraper:" + password).getBytes(StandardCharsets.UTF_8)));
    }
    return b.build();
  }

  private static HttpResponse.BodyHandler<String> text() {
    return HttpResponse.BodyHandlers.ofString();
  }
}
