package dev.cudawatch.alerts.http;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.cudawatch.alerts.store.AlertStore;
import dev.cudawatch.alerts.store.IncidentStore;
import dev.cudawatch.common.wire.WireJson;
import io.prometheus.metrics.exporter.httpserver.MetricsHandler;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/** Read-only HTTP: /metrics (Prometheus), /api/incidents, /api/alerts, /healthz. */
public final class ApiServer implements AutoCloseable {
  private static final int MAX_LIMIT = 1000;

  private final HttpServer server;
  private final ExecutorService pool;

  public ApiServer(
      String host,
      int port,
      PrometheusRegistry registry,
      IncidentStore incidents,
      AlertStore alerts,
      Health health)
      throws IOException {
    server = HttpServer.create(new InetSocketAddress(host, port), 64);
    pool =
        Executors.newFixedThreadPool(
            4,
            r -> {
              Thread t = new Thread(r, "cudawatch-http");
              t.setDaemon(true);
              return t;
            });
    server.setExecutor(pool);
    server.createContext("/metrics", new MetricsHandler(registry));
    server.createContext("/api/incidents", ex -> safely(ex, () -> incidents(ex, incidents)));
    server.createContext(
        "/api/alerts", ex -> safely(ex, () -> json(ex, 200, Map.of("alerts", alerts.all()))));
    server.createContext(
        "/healthz",
        ex ->
            safely(
                ex,
                () -> {
                  Map<String, Boolean> s = health.status();
                  boolean ok = s.values().stream().allMatch(Boolean::booleanValue);
                  json(
                      ex,
                      ok ? 200 : 503,
                      Map.of("status", ok ? "ok" : "starting", "components", s));
                }));
    server.createContext(
        "/",
        ex ->
            safely(
                ex,
                () ->
                    json(
                        ex,
                        404,
                        Map.of(
                            "error",
                            "not found",
                            "paths",
                            new String[] {
                              "/metrics", "/api/incidents", "/api/alerts", "/healthz"
                            }))));
    server.start();
  }

  public int port() {
    return server.getAddress().getPort();
  }

  private interface Handler {
    void run() throws IOException;
  }

  private static void safely(HttpExchange ex, Handler h) throws IOException {
    try (ex) {
      try {
        if (!"GET".equals(ex.getRequestMethod()) && !"HEAD".equals(ex.getRequestMethod())) {
          json(ex, 405, Map.of("error", "read-only API: use GET"));
          return;
        }
        h.run();
      } catch (BadRequest e) {
        json(ex, 400, Map.of("error", e.getMessage()));
      }
    }
  }

  private static void incidents(HttpExchange ex, IncidentStore store) throws IOException {
    Map<String, String> q = query(ex.getRequestURI().getRawQuery());
    Instant since = null;
    if (q.containsKey("since")) {
      try {
        since = Instant.parse(q.get("since"));
      } catch (DateTimeParseException e) {
        throw new BadRequest("since: expected an ISO-8601 instant such as 2026-11-22T03:00:00Z");
      }
    }
    int limit = intParam(q, "limit", 100);
    int offset = intParam(q, "offset", 0);
    if (limit < 1 || limit > MAX_LIMIT || offset < 0) {
      throw new BadRequest("limit must be 1.." + MAX_LIMIT + " and offset at least 0");
    }
    var page =
        store.query(
            new IncidentStore.IncidentQuery(
                q.get("class"), q.get("host"), q.get("job"), since, offset, limit));
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("total", page.total());
    body.put("offset", page.offset());
    body.put("limit", page.limit());
    body.put("incidents", page.items());
    json(ex, 200, body);
  }

  private static int intParam(Map<String, String> q, String k, int dflt) {
    try {
      return q.containsKey(k) ? Integer.parseInt(q.get(k)) : dflt;
    } catch (NumberFormatException e) {
      throw new BadRequest(k + ": not an integer");
    }
  }

  static Map<String, String> query(String raw) {
    Map<String, String> out = new HashMap<>();
    if (raw == null) {
      return out;
    }
    for (String kv : raw.split("&")) {
      int eq = kv.indexOf('=');
      if (eq > 0) {
        out.put(
            URLDecoder.decode(kv.substring(0, eq), StandardCharsets.UTF_8),
            URLDecoder.decode(kv.substring(eq + 1), StandardCharsets.UTF_8));
      }
    }
    return out;
  }

  private static void json(HttpExchange ex, int status, Object body) throws IOException {
    byte[] b = WireJson.mapper().writeValueAsBytes(body);
    ex.getResponseHeaders().set("Content-Type", "application/json");
    ex.sendResponseHeaders(status, "HEAD".equals(ex.getRequestMethod()) ? -1 : b.length);
    if (!"HEAD".equals(ex.getRequestMethod())) {
      try (OutputStream o = ex.getResponseBody()) {
        o.write(b);
      }
    }
  }

  private static final class BadRequest extends RuntimeException {
    private static final long serialVersionUID = 1L;

    BadRequest(String m) {
      super(m);
    }
  }

  @Override
  public void close() {
    server.stop(0);
    pool.shutdownNow();
  }
}
