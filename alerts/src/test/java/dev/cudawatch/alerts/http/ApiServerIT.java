package dev.cudawatch.alerts.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.alerts.store.AlertStore;
import dev.cudawatch.alerts.store.GpuHealthStore;
import dev.cudawatch.alerts.store.IncidentStore;
import dev.cudawatch.common.http.GuardedHttpServer;
import dev.cudawatch.common.wire.Action;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The API over real sockets against slow, oversized, malformed and misdirected requests. */
class ApiServerIT {
  private static final int SLOW_CLIENTS = 16; // four times the old fixed pool of four workers
  private ApiServer server;
  private final GpuHealthStore gpus = new GpuHealthStore(10);
  private final List<Socket> slow = new ArrayList<>();

  @BeforeEach
  void start() throws IOException {
    Health health = new Health();
    health.register("test", () -> true);
    IncidentStore store = new IncidentStore(10);
    server =
        ApiServer.builder()
            .registry(new PrometheusRegistry())
            .incidents(store)
            .alerts(new AlertStore(10))
            .gpus(gpus)
            .health(health)
            .pages(new IncidentPages(store, gpus, (h, g, t) -> 0, java.time.Clock.systemUTC()))
            .requestTimeoutMs(2_000)
            .build();
  }

  @AfterEach
  void stop() throws IOException {
    for (Socket s : slow) {
      s.close();
    }
    server.close();
  }

  /** Sends {@code head} raw and returns the status line (empty if the server just closed). */
  private String raw(String head) throws IOException {
    try (Socket s = new Socket("127.0.0.1", server.port())) {
      s.setSoTimeout(10_000);
      s.getOutputStream().write(head.getBytes(StandardCharsets.ISO_8859_1));
      String resp = new String(s.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
      return resp.lines().findFirst().orElse("");
    }
  }

  private String get(String target, String host) throws IOException {
    return raw("GET " + target + " HTTP/1.1\r\nHost: " + host + "\r\n\r\n");
  }

  @Test
  void slowClientsHoldingConnectionsDoNotBlockHealthz() throws Exception {
    for (int i = 0; i < SLOW_CLIENTS; i++) {
      Socket s = new Socket("127.0.0.1", server.port());
      slow.add(s);
      // a request head that never ends
      s.getOutputStream()
          .write(
              "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
                  .getBytes(StandardCharsets.ISO_8859_1));
      s.getOutputStream().flush();
    }
    assertEquals("HTTP/1.1 200 OK", get("/healthz", "127.0.0.1:" + server.port()));
    // the slow ones are cut off once the request timeout passes
    Socket first = slow.get(0);
    first.setSoTimeout(20_000);
    InputStream in = first.getInputStream();
    String answer = new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
    assertTrue(answer.startsWith("HTTP/1.1 408"), answer);
  }

  @Test
  void aRequestHeadBeyondTheLimitIs431() throws IOException {
    String huge = "x".repeat(GuardedHttpServer.MAX_HEAD_BYTES);
    try (Socket s = new Socket("127.0.0.1", server.port())) {
      s.setSoTimeout(10_000);
      OutputStream o = s.getOutputStream();
      o.write(
          ("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + huge + "\r\n\r\n")
              .getBytes(StandardCharsets.ISO_8859_1));
      String resp = new String(s.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
      assertTrue(resp.startsWith("HTTP/1.1 431"), resp.lines().findFirst().orElse(""));
    } catch (java.net.SocketException e) {
      // the server may close before reading all of it (a reset): also a refusal
    }
  }

  @Test
  void aForeignHostHeaderIsRefusedOnLoopback() throws IOException {
    assertEquals("HTTP/1.1 421 Misdirected Request", get("/api/alerts", "evil.example:7460"));
    assertEquals("HTTP/1.1 421 Misdirected Request", get("/healthz", "127.0.0.1.evil.example"));
    assertEquals("HTTP/1.1 200 OK", get("/api/alerts", "localhost:" + server.port()));
    assertEquals("HTTP/1.1 200 OK", get("/api/alerts", "[::1]:" + server.port()));
  }

  @Test
  void malformedInputGets400() throws IOException {
    assertEquals("HTTP/1.1 400 Bad Request", get("/api/incidents?since=%zz", "127.0.0.1"));
    assertEquals("HTTP/1.1 400 Bad Request", get("/api/alerts?limit=%", "127.0.0.1"));
    assertEquals("HTTP/1.1 400 Bad Request", get("/api/alerts?state=maybe", "127.0.0.1"));
    assertEquals("HTTP/1.1 400 Bad Request", raw("NONSENSE\r\n\r\n"));
    assertEquals(
        "HTTP/1.1 405 Method Not Allowed",
        raw("POST /api/alerts HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
    // HTTP/1.1 without a Host is malformed (RFC 9112 3.2: a server must answer 400); HTTP/1.0 tools
    // send none and are served
    assertEquals("HTTP/1.1 400 Bad Request", raw("GET /healthz HTTP/1.1\r\n\r\n"));
    String old = raw("GET /healthz HTTP/1.0\r\n\r\n");
    assertTrue(old.endsWith(" 200 OK"), old);
    assertEquals("HTTP/1.1 404 Not Found", get("/nope", "127.0.0.1"));
  }

  /** The body of a GET (one request per connection: the server closes after it). */
  private String body(String target) throws IOException {
    try (Socket s = new Socket("127.0.0.1", server.port())) {
      s.setSoTimeout(10_000);
      s.getOutputStream()
          .write(
              ("GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                  .getBytes(StandardCharsets.US_ASCII));
      String resp = new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      return resp.substring(resp.indexOf("\r\n\r\n") + 4);
    }
  }

  @Test
  void gpusAreListedHighestRungFirstAndFoundByKey() throws IOException {
    java.time.Instant t = java.time.Instant.parse("2026-11-22T03:00:00Z");
    gpus.add(
        new Action(
            1,
            "a1",
            Action.RECOMMENDATION,
            "reset_gpu",
            "the driver asks",
            "node-1",
            "0",
            null,
            "j",
            79,
            "i1",
            0,
            1,
            1,
            null,
            t,
            null));
    gpus.add(
        new Action(
            1,
            "a2",
            Action.RECOMMENDATION,
            "rma",
            "failing again",
            "node-2",
            "3",
            "GPU-abc",
            "j",
            79,
            "i2",
            2,
            2,
            4,
            3600.0,
            t,
            null));
    String all = body("/api/gpus");
    assertTrue(all.startsWith("{\"total\":2,"), all);
    assertTrue(all.indexOf("GPU-abc") < all.indexOf("node-1/0"), all);
    assertTrue(body("/api/gpus?min_level=1").startsWith("{\"total\":1,"));
    assertTrue(body("/api/gpus?host=node-1").contains("\"resets_seen\":1"));
    String one = body("/api/gpus/GPU-abc");
    assertTrue(one.contains("\"ladder_level\":2") && one.contains("\"mtbi_seconds\":3600.0"), one);
    assertTrue(body("/api/gpus/node-1%2F0").contains("\"recommendation\":\"reset_gpu\""));
    assertTrue(body("/api/gpus/node-1/0").contains("\"gpu\":\"0\""));
    assertEquals("HTTP/1.1 404 Not Found", get("/api/gpus/GPU-none", "127.0.0.1"));
    assertEquals("HTTP/1.1 400 Bad Request", get("/api/gpus?min_level=x", "127.0.0.1"));
    assertEquals("HTTP/1.1 421 Misdirected Request", get("/api/gpus", "evil.example"));
  }

  @Test
  void metricsAreServedInTheFormatAsked() throws IOException {
    String resp;
    try (Socket s = new Socket("127.0.0.1", server.port())) {
      s.setSoTimeout(10_000);
      s.getOutputStream()
          .write(
              "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                  .getBytes(StandardCharsets.US_ASCII));
      resp = new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    }
    assertTrue(resp.startsWith("HTTP/1.1 200"), resp);
    assertTrue(resp.contains("Content-Type: text/plain; version=0.0.4"), resp);
  }
}
