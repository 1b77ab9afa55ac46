package dev.cudawatch.alerts.http;

import dev.cudawatch.alerts.store.AlertStore;
import dev.cudawatch.alerts.store.GpuHealthStore;
import dev.cudawatch.alerts.store.IncidentStore;
import dev.cudawatch.alerts.store.JobFailureStore;
import dev.cudawatch.common.http.GuardedHttpServer;
import dev.cudawatch.common.http.GuardedHttpServer.Request;
import dev.cudawatch.common.http.GuardedHttpServer.Response;
import dev.cudawatch.common.http.WebConfig;
import dev.cudawatch.common.wire.WireJson;
import io.prometheus.metrics.expositionformats.ExpositionFormatWriter;
import io.prometheus.metrics.expositionformats.ExpositionFormats;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Read-only HTTP: /metrics (Prometheus), /api/incidents, /api/alerts, /api/gpus (each GPU's health
 * and repair-ladder state; /api/gpus/{key} one of them), /api/jobs (failed jobs: the culprit rank
 * and its evidence; /api/jobs/{job} the job's latest failure), /healthz, on a {@link
 * GuardedHttpServer} (bounded connections, request size and time; loopback Host check; TLS and
 * basic auth from a web-config file). Bad input (a malformed query string, an unknown parameter
 * value) gets a 400 with a one-line reason.
 */
public final class ApiServer implements AutoCloseable {
  private static final int MAX_LIMIT = 1000;

  /** Connections served at once; more are answered 503 without waiting. */
  static final int MAX_CONNECTIONS = 32;

  /** A request's head must arrive within this (slow clients are cut off). */
  static final long REQUEST_TIMEOUT_MS = 5_000;

  /** A connection is closed after this, response written or not. */
  static final long CONNECTION_TIMEOUT_MS = 30_000;

  private static final List<String> PATHS =
      List.of(
          "/",
          "/incident",
          "/taxonomy",
          "/metrics",
          "/api/incidents",
          "/api/alerts",
          "/api/gpus",
          "/api/jobs",
          "/healthz");
  private static final String GPUS = "/api/gpus/";
  private static final String JOBS = "/api/jobs/";

  /** A job id or host filter longer than this is not one (ids are short; the head is 16 KiB). */
  static final int MAX_NAME = 512;

  private final GuardedHttpServer server;
  private final PrometheusRegistry registry;
  private final IncidentStore incidents;
  private final AlertStore alerts;
  private final GpuHealthStore gpus;
  private final JobFailureStore jobFailures;
  private final Health health;
  private final IncidentPages pages;
  private final ExpositionFormats formats = ExpositionFormats.init();

  private ApiServer(Builder b) throws IOException {
    this.pages = Objects.requireNonNull(b.pages, "pages");
    this.gpus = b.gpus == null ? pages.gpus() : b.gpus;
    this.jobFailures = pages.jobFailures();
    this.registry = Objects.requireNonNull(b.registry, "registry");
    this.incidents = Objects.requireNonNull(b.incidents, "incidents");
    this.alerts = Objects.requireNonNull(b.alerts, "alerts");
    this.health = Objects.requireNonNull(b.health, "health");
    this.server =
        new GuardedHttpServer(
            b.host,
            b.port,
            MAX_CONNECTIONS,
            b.requestTimeoutMs,
            CONNECTION_TIMEOUT_MS,
            b.web,
            this::handle);
  }

  public static Builder builder() {
    return new Builder();
  }

  /**
   * What the server serves and where. Needed: registry, incidents, alerts, health and pages (the
   * incident page at {@code /}); the GPU health of {@code /api/gpus} defaults to the pages' store,
   * the host to loopback, the port to any free one, and there is no TLS or basic auth without a
   * web-config file.
   */
  public static final class Builder {
    private String host = "127.0.0.1";
    private int port;
    private PrometheusRegistry registry;
    private IncidentStore incidents;
    private AlertStore alerts;
    private GpuHealthStore gpus;
    private Health health;
    private IncidentPages pages;
    private long requestTimeoutMs = REQUEST_TIMEOUT_MS;
    private WebConfig web;

    private Builder() {}

    public Builder host(String host) {
      this.host = host;
      return this;
    }

    /** 0: any free port ({@link ApiServer#port()} tells which). */
    public Builder port(int port) {
      this.port = port;
      return this;
    }

    public Builder registry(PrometheusRegistry registry) {
      this.registry = registry;
      return this;
    }

    public Builder incidents(IncidentStore incidents) {
      this.incidents = incidents;
      return this;
    }

    public Builder alerts(AlertStore alerts) {
      this.alerts = alerts;
      return this;
    }

    public Builder gpus(GpuHealthStore gpus) {
      this.gpus = gpus;
      return this;
    }

    public Builder health(Health health) {
      this.health = health;
      return this;
    }

    public Builder pages(IncidentPages pages) {
      this.pages = pages;
      return this;
    }

    /** How soon a request's head must arrive (tests shorten it). */
    Builder requestTimeoutMs(long requestTimeoutMs) {
      this.requestTimeoutMs = requestTimeoutMs;
      return this;
    }

    /** TLS and basic auth from a web-config file (null: neither). */
    public Builder web(WebConfig web) {
      this.web = web;
      return this;
    }

    /** Binds the port and starts serving. */
    public ApiServer build() throws IOException {
      return new ApiServer(this);
    }
  }

  public int port() {
    return server.port();
  }

  private Response handle(Request req) throws IOException {
    if (!"GET".equals(req.method()) && !"HEAD".equals(req.method())) {
      return json(405, Map.of("error", "read-only API: use GET"));
    }
    try {
      URI uri;
      try {
        uri = new URI(req.target());
      } catch (URISyntaxException e) {
        throw new BadRequest("malformed request target");
      }
      String path = uri.getRawPath() == null ? "" : uri.getRawPath();
      Map<String, String> q = query(uri.getRawQuery());
      if (path.startsWith(GPUS)) {
        return gpu(path.substring(GPUS.length()));
      }
      if (path.startsWith(JOBS)) {
        return job(path.substring(JOBS.length()));
      }
      return switch (path) {
        case "/" -> pages.list(q);
        case "/incident" -> pages.incident(q);
        case "/taxonomy" -> pages.taxonomy();
        case "/metrics" -> metrics(req);
        case "/api/incidents" -> incidents(q);
        case "/api/alerts" -> alerts(q);
        case "/api/gpus" -> gpus(q);
        case "/api/jobs" -> jobs(q);
        case "/healthz" -> healthz();
        default -> json(404, Map.of("error", "not found", "paths", PATHS));
      };
    } catch (BadRequest e) {
      return json(400, Map.of("error", e.getMessage()));
    }
  }

  private Response metrics(Request req) throws IOException {
    ExpositionFormatWriter w = formats.findWriter(req.headers().get("accept"));
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    w.write(out, registry.scrape());
    return new Response(200, w.getContentType(), out.toByteArray());
  }

  private Response healthz() throws IOException {
    Map<String, Boolean> s = health.status();
    boolean ok = s.values().stream().allMatch(Boolean::booleanValue);
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("status", ok ? "ok" : "starting");
    body.put("components", s);
    body.put("details", health.details());
    return json(ok ? 200 : 503, body);
  }

  private Response incidents(Map<String, String> q) throws IOException {
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
    checkPage(limit, offset);
    var page =
        incidents.query(
            new IncidentStore.IncidentQuery(
                q.get("class"), q.get("host"), q.get("job"), since, offset, limit));
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("total", page.total());
    body.put("offset", page.offset());
    body.put("limit", page.limit());
    body.put("incidents", page.items());
    return json(200, body);
  }

  /** Alerts newest first, paged like incidents; {@code state} filters firing or resolved. */
  private Response alerts(Map<String, String> q) throws IOException {
    int limit = intParam(q, "limit", 100);
    int offset = intParam(q, "offset", 0);
    checkPage(limit, offset);
    String state = q.get("state");
    if (state != null && !state.equals("firing") && !state.equals("resolved")) {
      throw new BadRequest("state must be firing or resolved");
    }
    var page = alerts.page(state, offset, limit);
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("total", page.total());
    body.put("offset", offset);
    body.put("limit", limit);
    body.put("alerts", page.items());
    return json(200, body);
  }

  /** GPUs held, the highest rung first; {@code host} and {@code min_level} filter. */
  private Response gpus(Map<String, String> q) throws IOException {
    int limit = intParam(q, "limit", 100);
    int offset = intParam(q, "offset", 0);
    checkPage(limit, offset);
    int minLevel = intParam(q, "min_level", 0);
    String host = q.get("host");
    List<GpuHealthStore.GpuState> all =
        gpus.all().stream()
            .filter(g -> host == null || host.equals(g.host()))
            .filter(g -> g.ladderLevel() >= minLevel)
            .toList();
    int from = Math.min(offset, all.size());
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("total", all.size());
    body.put("offset", offset);
    body.put("limit", limit);
    body.put("gpus", all.subList(from, Math.min(all.size(), from + limit)));
    return json(200, body);
  }

  /** One GPU by its key: its UUID, or {@code host/index} when the ledger knew no UUID. */
  private Response gpu(String rawKey) throws IOException {
    String key;
    try {
      key = URLDecoder.decode(rawKey, StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      throw new BadRequest("malformed GPU key (bad %-escape)");
    }
    var g = gpus.get(key);
    if (g.isEmpty()) {
      return json(404, Map.of("error", "no GPU health held for that key"));
    }
    return json(200, g.get());
  }

  /** Failed jobs, newest first, paged; {@code job} and {@code host} (any of its hosts) filter. */
  private Response jobs(Map<String, String> q) throws IOException {
    int limit = intParam(q, "limit", 100);
    int offset = intParam(q, "offset", 0);
    checkPage(limit, offset);
    var page = jobFailures.query(name(q, "job"), name(q, "host"), offset, limit);
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("total", page.total());
    body.put("offset", offset);
    body.put("limit", limit);
    body.put("jobs", page.items());
    return json(200, body);
  }

  /** A job's latest failure: its culprit rank, host, GPU, cause and evidence. */
  private Response job(String rawJob) throws IOException {
    String job;
    try {
      job = URLDecoder.decode(rawJob, StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      throw new BadRequest("malformed job id (bad %-escape)");
    }
    if (job.isBlank() || job.length() > MAX_NAME) {
      throw new BadRequest("job id must be 1.." + MAX_NAME + " characters");
    }
    var f = jobFailures.latest(job);
    if (f.isEmpty()) {
      return json(404, Map.of("error", "no failure of that job is held"));
    }
    return json(200, f.get());
  }

  /** A name filter: absent is any; empty or too long is a mistake, not "any". */
  private static String name(Map<String, String> q, String k) {
    String v = q.get(k);
    if (v != null && (v.isEmpty() || v.length() > MAX_NAME)) {
      throw new BadRequest(k + ": must be 1.." + MAX_NAME + " characters");
    }
    return v;
  }

  private static void checkPage(int limit, int offset) {
    if (limit < 1 || limit > MAX_LIMIT || offset < 0) {
      throw new BadRequest("limit must be 1.." + MAX_LIMIT + " and offset at least 0");
    }
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
    try {
      for (String kv : raw.split("&")) {
        int eq = kv.indexOf('=');
        if (eq > 0) {
          out.put(
              URLDecoder.decode(kv.substring(0, eq), StandardCharsets.UTF_8),
              URLDecoder.decode(kv.substring(eq + 1), StandardCharsets.UTF_8));
        }
      }
    } catch (IllegalArgumentException e) {
      throw new BadRequest("malformed query string (bad %-escape)");
    }
    return out;
  }

  private static Response json(int status, Object body) throws IOException {
    return new Response(status, "application/json", WireJson.mapper().writeValueAsBytes(body));
  }

  private static final class BadRequest extends RuntimeException {
    private static final long serialVersionUID = 1L;

    BadRequest(String m) {
      super(m);
    }
  }

  @Override
  public void close() {
    server.close();
  }
}
