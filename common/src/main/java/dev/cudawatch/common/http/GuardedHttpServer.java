package dev.cudawatch.common.http;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.UriCompliance;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.server.ConnectionFactory;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.NetworkConnectionLimit;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.eclipse.jetty.server.internal.HttpConnection;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.ScheduledExecutorScheduler;
import org.eclipse.jetty.util.thread.Scheduler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The alerts service's HTTP server (the node agent has the same checks on the JDK's server, to load
 * no Jetty), for read-only GET endpoints that a slow or hostile client cannot block: Jetty's core
 * (no servlets), which parses request heads on its selector without holding a thread, so clients
 * that never finish a head take no worker. On top of it, the limits of cudawatch's old hand-written
 * server stay: at most {@code maxConnections} connections (more wait in the accept queue), a
 * request head of at most {@link #MAX_HEAD_BYTES} (431) that must arrive within {@code
 * requestTimeoutMs} (408), any connection closed after {@code connectionTimeoutMs} (a client that
 * does not read its response), one request per connection. Bound to a loopback address it answers
 * only requests whose {@code Host} names a loopback host (421), so a web page cannot reach it
 * through DNS rebinding. A {@link WebConfig} adds TLS and basic auth, as Prometheus exporters do;
 * every path is behind the auth, /healthz too.
 */
public final class GuardedHttpServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(GuardedHttpServer.class);
  public static final int MAX_HEAD_BYTES = 16 * 1024;

  /** A parsed request; header names lower case (the first value of each). */
  public record Request(String method, String target, Map<String, String> headers) {}

  /** A response; {@code body} is not sent for HEAD; {@code headers} are added as given. */
  public record Response(int status, String contentType, byte[] body, Map<String, String> headers) {
    public Response(int status, String contentType, byte[] body) {
      this(status, contentType, body, Map.of());
    }
  }

  public interface Handler {
    Response handle(Request r) throws IOException;
  }

  private static final byte[] REQUEST_TIMEOUT =
      ("HTTP/1.1 408 Request Timeout\r\nContent-Type: application/json\r\nContent-Length: 46\r\n"
              + "Connection: close\r\n\r\n{\"error\":\"request head not received in time\"}")
          .getBytes(StandardCharsets.ISO_8859_1);

  private final Server server;
  private final ServerConnector connector;

  /** Plain HTTP, no auth (tests and defaults). */
  public GuardedHttpServer(
      String host,
      int port,
      int maxConnections,
      long requestTimeoutMs,
      long connectionTimeoutMs,
      Handler handler)
      throws IOException {
    this(host, port, maxConnections, requestTimeoutMs, connectionTimeoutMs, null, handler);
  }

  /**
   * @param web TLS and basic auth from a web-config file; null for plain HTTP without auth
   */
  public GuardedHttpServer(
      String host,
      int port,
      int maxConnections,
      long requestTimeoutMs,
      long connectionTimeoutMs,
      WebConfig web,
      Handler handler)
      throws IOException {
    boolean loopback = InetAddress.getByName(host).isLoopbackAddress();
    // few threads: one acceptor, one selector, and workers that only run quick handlers
    QueuedThreadPool pool = new QueuedThreadPool(Math.max(8, maxConnections / 2 + 4), 2, 30_000);
    pool.setName("cudawatch-http");
    pool.setDaemon(true);
    // a daemon scheduler too (Jetty's default is not): an unclosed server never holds the JVM up
    this.server =
        new Server(pool, new ScheduledExecutorScheduler("cudawatch-http-timer", true), null);
    HttpConfiguration config = new HttpConfiguration();
    config.setRequestHeaderSize(MAX_HEAD_BYTES);
    config.setSendServerVersion(false);
    config.setSendXPoweredBy(false);
    // GPU keys hold an encoded slash (/api/gpus/node-1%2F0); the handlers decode paths themselves
    config.setUriCompliance(UriCompliance.LEGACY);
    HttpConnectionFactory http = new HttpConnectionFactory(config);
    ConnectionFactory[] factories =
        web == null || web.tls() == null
            ? new ConnectionFactory[] {http}
            : new ConnectionFactory[] {
              new SslConnectionFactory(web.tls().sslContextFactory(), http.getProtocol()), http
            };
    this.connector = new ServerConnector(server, 1, 1, factories);
    connector.setHost(host);
    connector.setPort(port);
    connector.setReuseAddress(true);
    connector.setAcceptQueueSize(64);
    // a stalled write or read is cut off by the deadlines below at the latest
    connector.setIdleTimeout(connectionTimeoutMs);
    connector.addBean(new Deadlines(requestTimeoutMs, connectionTimeoutMs));
    server.addConnector(connector);
    server.addBean(new NetworkConnectionLimit(maxConnections, connector));
    BasicAuth auth = web == null ? null : web.basicAuth();
    server.setHandler(new Adapter(handler, loopback, auth));
    try {
      server.start();
    } catch (IOException e) {
      close();
      throw e;
    } catch (Exception e) {
      close();
      throw new IOException("http: cannot start on " + host + ":" + port + ": " + e, e);
    }
  }

  public int port() {
    return connector.getLocalPort();
  }

  /**
   * The head deadline (408 when a request head is still incomplete) and the connection deadline
   * (closed, response written or not) of each connection, on Jetty's scheduler.
   */
  private final class Deadlines implements Connection.Listener {
    private final long requestTimeoutMs;
    private final long connectionTimeoutMs;

    Deadlines(long requestTimeoutMs, long connectionTimeoutMs) {
      this.requestTimeoutMs = requestTimeoutMs;
      this.connectionTimeoutMs = connectionTimeoutMs;
    }

    @Override
    public void onOpened(Connection c) {
      if (!(c instanceof HttpConnection h)) {
        return; // the TLS layer below: its HttpConnection gets the deadlines
      }
      Scheduler s = connector.getScheduler();
      Scheduler.Task head =
          s.schedule(() -> headDeadline(h), requestTimeoutMs, TimeUnit.MILLISECONDS);
      Scheduler.Task whole =
          s.schedule(() -> h.getEndPoint().close(), connectionTimeoutMs, TimeUnit.MILLISECONDS);
      h.addEventListener(
          new Connection.Listener() {
            @Override
            public void onClosed(Connection closed) {
              head.cancel();
              whole.cancel();
            }
          });
    }

    private void headDeadline(HttpConnection h) {
      if (!h.getEndPoint().isOpen() || !h.getParser().inHeaderState()) {
        return;
      }
      try {
        h.getEndPoint().flush(ByteBuffer.wrap(REQUEST_TIMEOUT));
      } catch (IOException | RuntimeException e) {
        // the client went away, or TLS never got far enough to answer: just close
      } finally {
        h.getEndPoint().close();
      }
    }
  }

  /** Jetty's request to ours and back: the Host check, the auth, then the handler. */
  private static final class Adapter extends org.eclipse.jetty.server.Handler.Abstract {
    private final Handler handler;
    private final boolean loopback;
    private final BasicAuth auth;

    Adapter(Handler handler, boolean loopback, BasicAuth auth) {
      super(InvocationType.BLOCKING);
      this.handler = handler;
      this.loopback = loopback;
      this.auth = auth;
    }

    @Override
    public boolean handle(
        org.eclipse.jetty.server.Request request,
        org.eclipse.jetty.server.Response response,
        Callback callback) {
      Map<String, String> headers = new LinkedHashMap<>();
      for (HttpField f : request.getHeaders()) {
        headers.putIfAbsent(f.getLowerCaseName(), f.getValue());
      }
      Response r =
          HttpGuard.answer(
              handler,
              loopback,
              auth,
              new Request(request.getMethod(), request.getHttpURI().getPathQuery(), headers));
      response.setStatus(r.status());
      var h = response.getHeaders();
      h.put(HttpHeader.CONTENT_TYPE, r.contentType());
      h.put(HttpHeader.CONTENT_LENGTH, r.body().length);
      r.headers().forEach(h::put);
      h.put(HttpHeader.CONNECTION, "close"); // one request per connection, as the deadlines assume
      response.write(true, ByteBuffer.wrap(r.body()), callback);
      return true;
    }
  }

  /** localhost, 127.x.x.x or [::1], with or without a port. */
  public static boolean loopbackHost(String host) {
    return HttpGuard.loopbackHost(host);
  }

  public static Response error(int status, String message) {
    return HttpGuard.error(status, message);
  }

  @Override
  public void close() {
    try {
      server.stop();
    } catch (Exception e) {
      LOG.warn("http: stop failed: {}", e.toString());
    }
  }
}
