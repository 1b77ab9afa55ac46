package dev.cudawatch.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.http.GuardedHttpServer.Response;
import dev.cudawatch.testkit.Await;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The agent's JDK-based server over real sockets: the checks and limits Jetty's server had. */
class AgentHttpServerTest {
  private AgentHttpServer server;

  @BeforeEach
  void start() throws IOException {
    server =
        new AgentHttpServer(
            "127.0.0.1",
            0,
            AgentEndpoint.MAX_CONNECTIONS,
            AgentEndpoint.REQUEST_TIMEOUT_MS,
            AgentEndpoint.CONNECTION_TIMEOUT_MS,
            null,
            r -> {
              if (r.target().startsWith("/fail")) {
                throw new IOException("the handler failed");
              }
              byte[] body = (r.method() + " " + r.target()).getBytes(StandardCharsets.UTF_8);
              return new Response(200, "text/plain", body);
            });
  }

  @AfterEach
  void stop() {
    server.close();
  }

  /** One request on a new connection; the whole response as text (the server closes it). */
  private String exchange(String head) throws IOException {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", server.port()), 5_000);
      s.setSoTimeout(20_000);
      s.getOutputStream().write(head.getBytes(StandardCharsets.ISO_8859_1));
      s.getOutputStream().flush();
      return new String(s.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
    }
  }

  @Test
  void answersGetAndHeadWithTheRawTargetAndClosesTheConnection() throws IOException {
    String get = exchange("GET /api/gpus/node-1%2F0?x=1 HTTP/1.1\r\nHost: localhost:9\r\n\r\n");
    assertTrue(get.startsWith("HTTP/1.1 200 "), get);
    assertTrue(get.endsWith("\r\n\r\nGET /api/gpus/node-1%2F0?x=1"), get);
    assertTrue(get.toLowerCase().contains("\r\nconnection: close\r\n"), get);
    assertTrue(get.toLowerCase().contains("\r\ncontent-type: text/plain\r\n"), get);

    String head = exchange("HEAD /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    assertTrue(head.startsWith("HTTP/1.1 200 "), head);
    assertTrue(head.endsWith("\r\n\r\n"), "no body for HEAD: " + head);
  }

  @Test
  void aForeignHostIs421AndAFailingHandler500() throws IOException {
    String rebound = exchange("GET /metrics HTTP/1.1\r\nHost: evil.example\r\n\r\n");
    assertTrue(rebound.startsWith("HTTP/1.1 421 "), rebound);
    assertTrue(rebound.contains("DNS rebinding"), rebound);
    String failed = exchange("GET /fail HTTP/1.1\r\nHost: localhost\r\n\r\n");
    assertTrue(failed.startsWith("HTTP/1.1 500 "), failed);
    assertTrue(failed.endsWith("{\"error\":\"internal error\"}"), failed);
  }

  @Test
  void aHeadOverTheLimitIsNotServed() throws IOException {
    String huge = "x".repeat(AgentHttpServer.MAX_HEAD_BYTES);
    String r;
    try {
      r = exchange("GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: " + huge + "\r\n\r\n");
    } catch (SocketException reset) {
      // the JDK server closes with the head unread, which the client sees as a reset (Jetty's
      // server answered 431): either way the request is refused
      r = "reset: " + reset.getMessage();
    }
    assertFalse(r.startsWith("HTTP/1.1 200 "), r.length() > 200 ? r.substring(0, 200) : r);
  }

  @Test
  void aHeadThatNeverEndsIsCutOffWhileOthersAreServed() throws Exception {
    try (Socket slow = new Socket()) {
      slow.connect(new InetSocketAddress("127.0.0.1", server.port()), 5_000);
      OutputStream o = slow.getOutputStream();
      o.write("GET /healthz HTTP/1.1\r\nHost: local".getBytes(StandardCharsets.US_ASCII));
      o.flush();
      // a whole request beside it is answered while the slow one holds its worker
      String r = exchange("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n");
      assertTrue(r.startsWith("HTTP/1.1 200 "), r);
      slow.setSoTimeout(200);
      InputStream in = slow.getInputStream();
      AtomicBoolean closed = new AtomicBoolean();
      ByteArrayOutputStream got = new ByteArrayOutputStream();
      // the request deadline (5 s, checked each second) closes it; generous for a loaded machine
      Await.until(
          "the server closes a connection whose head never ends",
          () -> {
            try {
              int b = in.read();
              if (b < 0) {
                closed.set(true);
              } else {
                got.write(b);
              }
            } catch (SocketTimeoutException stillOpen) {
              return false;
            } catch (IOException reset) {
              closed.set(true);
            }
            return closed.get();
          },
          Duration.ofSeconds(60));
      assertEquals("", got.toString(StandardCharsets.ISO_8859_1), "no response to half a head");
    }
  }
}
