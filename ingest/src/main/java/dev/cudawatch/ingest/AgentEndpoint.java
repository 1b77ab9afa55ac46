package dev.cudawatch.ingest;

import dev.cudawatch.common.http.GuardedHttpServer.Request;
import dev.cudawatch.common.http.GuardedHttpServer.Response;
import dev.cudawatch.common.http.HttpGuard;
import dev.cudawatch.common.http.WebConfig;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.function.Supplier;

/**
 * The agent's {@code /metrics} (Prometheus text format) and {@code /healthz}, on {@link
 * AgentHttpServer}: the alerts service's checks and limits on the JDK's server, so slow or idle
 * clients are cut off at a deadline and cannot take the worker a probe needs. TLS and basic auth
 * come from the agent's {@code web_config_file}.
 */
final class AgentEndpoint implements AutoCloseable {
  static final int MAX_CONNECTIONS = 32;
  static final long REQUEST_TIMEOUT_MS = 5_000;
  static final long CONNECTION_TIMEOUT_MS = 15_000;

  /** The health body and whether it is healthy. */
  record Health(boolean ok, String json) {}

  private final AgentHttpServer server;
  private final PrometheusRegistry registry;
  private final Supplier<Health> health;
  private final PrometheusTextFormatWriter text = PrometheusTextFormatWriter.create();

  AgentEndpoint(
      String host, int port, WebConfig web, PrometheusRegistry registry, Supplier<Health> health)
      throws IOException {
    this.registry = registry;
    this.health = health;
    this.server =
        new AgentHttpServer(
            host,
            port,
            MAX_CONNECTIONS,
            REQUEST_TIMEOUT_MS,
            CONNECTION_TIMEOUT_MS,
            web,
            this::handle);
  }

  private Response handle(Request r) throws IOException {
    String path = r.target();
    int q = path.indexOf('?');
    if (q >= 0) {
      path = path.substring(0, q);
    }
    if (!r.method().equals("GET") && !r.method().equals("HEAD")) {
      return HttpGuard.error(405, "only GET and HEAD");
    }
    if (path.equals("/metrics")) {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      text.write(out, registry.scrape());
      return new Response(200, text.getContentType(), out.toByteArray());
    }
    Health h = health.get();
    int status = !path.equals("/healthz") ? 404 : h.ok() ? 200 : 503;
    return new Response(status, "application/json", h.json().getBytes(StandardCharsets.UTF_8));
  }

  int port() {
    return server.port();
  }

  @Override
  public void close() {
    server.close();
  }
}
