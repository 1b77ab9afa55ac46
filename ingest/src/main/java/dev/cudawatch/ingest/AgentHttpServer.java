package dev.cudawatch.ingest;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsParameters;
import com.sun.net.httpserver.HttpsServer;
import dev.cudawatch.common.http.BasicAuth;
import dev.cudawatch.common.http.GuardedHttpServer.Handler;
import dev.cudawatch.common.http.GuardedHttpServer.Request;
import dev.cudawatch.common.http.GuardedHttpServer.Response;
import dev.cudawatch.common.http.HttpGuard;
import dev.cudawatch.common.http.WebConfig;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.security.GeneralSecurityException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLContext;

/**
 * The agent's HTTP server: the JDK's {@code com.sun.net.httpserver}, not Jetty, whose ~415 classes
 * and five threads were a part of the agent's fixed memory (bench/results/profile-agent.md, fourth
 * round). The same checks as the alerts service's {@code GuardedHttpServer} ({@link HttpGuard}: the
 * loopback Host, basic auth) and its limits, as the JDK server's own settings: at most {@code
 * maxConnections} connections (more are closed at once), a request head of at most {@link
 * #MAX_HEAD_BYTES} that must arrive within the request deadline, a response written within the
 * connection deadline, one request per connection. The JDK server reads a request head on a worker
 * thread, so the workers are as many as the connections: a client that sends its head a byte at a
 * time holds one until its deadline but never the one a probe needs. Workers are made on demand and
 * end after 30 s idle, so an agent nobody scrapes has none.
 */
final class AgentHttpServer implements AutoCloseable {
  static final int MAX_HEAD_BYTES = 16 * 1024;
  private static final AtomicInteger THREADS = new AtomicInteger();

  private final HttpServer server;
  private final ThreadPoolExecutor workers;

  /**
   * @param web TLS and basic auth from a web-config file; null for plain HTTP without auth
   */
  AgentHttpServer(
      String host,
      int port,
      int maxConnections,
      long requestTimeoutMs,
      long connectionTimeoutMs,
      WebConfig web,
      Handler handler)
      throws IOException {
    limits(maxConnections, requestTimeoutMs, connectionTimeoutMs);
    boolean loopback = InetAddress.getByName(host).isLoopbackAddress();
    InetSocketAddress at = new InetSocketAddress(host, port);
    if (web != null && web.tls() != null) {
      HttpsServer https = HttpsServer.create(at, 64);
      https.setHttpsConfigurator(tls(web));
      server = https;
    } else {
      server = HttpServer.create(at, 64);
    }
    workers =
        new ThreadPoolExecutor(
            0,
            maxConnections,
            30,
            TimeUnit.SECONDS,
            new SynchronousQueue<>(),
            r -> {
              Thread t = new Thread(r, "cudawatch-http-" + THREADS.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    server.setExecutor(workers);
    BasicAuth auth = web == null ? null : web.basicAuth();
    server.createContext("/", x -> exchange(x, handler, loopback, auth));
    startAsDaemon();
  }

  /**
   * The JDK server's limits are system properties, read once when its first server starts; the
   * agent runs one server, so they are set here unless the user set them (JAVA_OPTS).
   */
  private static void limits(int maxConnections, long requestMs, long connectionMs) {
    var p = System.getProperties();
    p.putIfAbsent("jdk.httpserver.maxConnections", Integer.toString(maxConnections));
    p.putIfAbsent("sun.net.httpserver.maxReqHeaderSize", Integer.toString(MAX_HEAD_BYTES));
    // in whole seconds, checked each second by the server's timer
    p.putIfAbsent("sun.net.httpserver.maxReqTime", Long.toString(Math.max(1, requestMs / 1000)));
    p.putIfAbsent("sun.net.httpserver.maxRspTime", Long.toString(Math.max(1, connectionMs / 1000)));
  }

  private static HttpsConfigurator tls(WebConfig web) throws IOException {
    SSLContext context;
    try {
      context = web.tls().sslContext();
    } catch (GeneralSecurityException e) {
      throw new IOException("http: cannot set up TLS: " + e.getMessage(), e);
    }
    return new HttpsConfigurator(context) {
      @Override
      public void configure(HttpsParameters p) {
        p.setSSLParameters(web.tls().parameters(context));
      }
    };
  }

  /**
   * The server's dispatcher thread takes the daemon status of the thread that starts it: started
   * from a daemon thread, an unclosed server never holds the JVM up (as Jetty's daemon pool did).
   */
  private void startAsDaemon() throws IOException {
    Thread starter = new Thread(server::start, "cudawatch-http-start");
    starter.setDaemon(true);
    starter.start();
    try {
      starter.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      close();
      throw new IOException("http: interrupted while starting");
    }
  }

  private static void exchange(
      HttpExchange x, Handler handler, boolean loopback, dev.cudawatch.common.http.BasicAuth auth)
      throws IOException {
    try (x) {
      Map<String, String> headers = new LinkedHashMap<>();
      for (Map.Entry<String, List<String>> h : x.getRequestHeaders().entrySet()) {
        if (!h.getValue().isEmpty()) {
          headers.putIfAbsent(h.getKey().toLowerCase(Locale.ROOT), h.getValue().get(0));
        }
      }
      String path = x.getRequestURI().getRawPath();
      String query = x.getRequestURI().getRawQuery();
      String method = x.getRequestMethod();
      Response r =
          HttpGuard.answer(
              handler,
              loopback,
              auth,
              new Request(method, query == null ? path : path + "?" + query, headers));
      var h = x.getResponseHeaders();
      h.set("Content-Type", r.contentType());
      r.headers().forEach(h::set);
      h.set("Connection", "close"); // one request per connection, as the deadlines assume
      boolean head = method.equals("HEAD");
      x.sendResponseHeaders(r.status(), head || r.body().length == 0 ? -1 : r.body().length);
      if (!head) {
        try (OutputStream out = x.getResponseBody()) {
          out.write(r.body());
        }
      }
    }
  }

  int port() {
    return server.getAddress().getPort();
  }

  @Override
  public void close() {
    server.stop(0);
    workers.shutdownNow();
  }
}
