package dev.cudawatch.common.http;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A small HTTP/1.1 server for read-only GET endpoints that a slow or hostile client cannot block: a
 * thread per connection up to {@code maxConnections} (more are answered 503 at once), a request
 * head of at most {@link #MAX_HEAD_BYTES} that must arrive within {@code requestTimeoutMs}, and a
 * watchdog that closes any connection still open after {@code connectionTimeoutMs} (a client that
 * does not read its response). One request per connection ({@code Connection: close}). Bound to a
 * loopback address, it answers only requests whose {@code Host} names a loopback host, so a web
 * page cannot reach it through DNS rebinding. The one HTTP server of the alerts service and the
 * node agent: Java's own server (under Prometheus' exporter) hands a connection to a worker before
 * its request arrives, so ten slow clients left /healthz without one.
 */
public final class GuardedHttpServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(GuardedHttpServer.class);
  public static final int MAX_HEAD_BYTES = 16 * 1024;

  /** A parsed request; header names lower case. */
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

  private final ServerSocket socket;
  private final Handler handler;
  private final long requestTimeoutMs;
  private final long connectionTimeoutMs;
  private final boolean loopback;
  private final ThreadPoolExecutor workers;
  private final ScheduledExecutorService watchdog;
  private final Map<Socket, Long> open = new ConcurrentHashMap<>(); // socket -> deadline (nanos)
  private final Thread acceptor;
  private volatile boolean running = true;

  public GuardedHttpServer(
      String host,
      int port,
      int maxConnections,
      long requestTimeoutMs,
      long connectionTimeoutMs,
      Handler handler)
      throws IOException {
    InetAddress addr = InetAddress.getByName(host);
    this.socket = new ServerSocket();
    socket.setReuseAddress(true);
    socket.bind(new InetSocketAddress(addr, port), 64);
    this.loopback = addr.isLoopbackAddress();
    this.handler = handler;
    this.requestTimeoutMs = requestTimeoutMs;
    this.connectionTimeoutMs = connectionTimeoutMs;
    this.workers =
        new ThreadPoolExecutor(
            0,
            maxConnections,
            30,
            TimeUnit.SECONDS,
            new SynchronousQueue<>(),
            r -> daemon(r, "cudawatch-http"));
    this.watchdog =
        Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "cudawatch-http-dog"));
    watchdog.scheduleWithFixedDelay(this::closeOverdue, 250, 250, TimeUnit.MILLISECONDS);
    this.acceptor = daemon(this::accept, "cudawatch-http-accept");
    acceptor.start();
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }

  public int port() {
    return socket.getLocalPort();
  }

  private void accept() {
    while (running) {
      Socket s;
      try {
        s = socket.accept();
      } catch (IOException e) {
        if (running) {
          LOG.warn("http: accept failed: {}", e.toString());
          try {
            Thread.sleep(50); // out of descriptors, say: do not spin on it
          } catch (InterruptedException ie) {
            return;
          }
        }
        continue;
      }
      open.put(s, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(connectionTimeoutMs));
      try {
        workers.execute(() -> serve(s));
      } catch (RejectedExecutionException e) {
        // every worker busy (slow clients): say so at once rather than queue behind them
        try (s) {
          s.setSoTimeout(100);
          write(s.getOutputStream(), "GET", error(503, "too many connections"));
        } catch (IOException ignored) {
          // the client went away
        } finally {
          open.remove(s);
        }
      }
    }
  }

  private void closeOverdue() {
    long now = System.nanoTime();
    open.forEach(
        (s, deadline) -> {
          if (now - deadline >= 0) {
            try {
              s.close(); // unblocks its worker's read or write
            } catch (IOException ignored) {
              // closing anyway
            }
            open.remove(s);
          }
        });
  }

  private void serve(Socket s) {
    try (s) {
      Request req;
      try {
        req = readHead(s);
      } catch (BadRequest e) {
        write(s.getOutputStream(), "GET", error(e.status, e.getMessage()));
        return;
      }
      if (req == null) {
        return; // closed or timed out before a whole request head
      }
      Response resp;
      if (loopback && !loopbackHost(req.headers().get("host"))) {
        resp = error(421, "this server answers only to a loopback Host (DNS rebinding)");
      } else {
        resp = handler.handle(req);
      }
      write(s.getOutputStream(), req.method(), resp);
    } catch (IOException e) {
      // the client went away or was too slow: nothing to answer
    } catch (RuntimeException e) {
      LOG.error("http: handler failed", e);
    } finally {
      open.remove(s);
    }
  }

  /** The request line and headers, within the size and time bounds; null if the client left. */
  private Request readHead(Socket s) throws IOException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(requestTimeoutMs);
    InputStream in = new BufferedInputStream(s.getInputStream(), 4096);
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    int matched = 0; // of "\r\n\r\n"
    while (matched < 4) {
      long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
      if (left <= 0) {
        throw new BadRequest(408, "request head not received in time");
      }
      s.setSoTimeout((int) Math.min(Integer.MAX_VALUE, left));
      int b;
      try {
        b = in.read();
      } catch (SocketTimeoutException e) {
        throw new BadRequest(408, "request head not received in time");
      }
      if (b < 0) {
        return null;
      }
      if (head.size() >= MAX_HEAD_BYTES) {
        throw new BadRequest(431, "request head larger than " + MAX_HEAD_BYTES + " bytes");
      }
      head.write(b);
      if ((b == '\r' && (matched == 0 || matched == 2)) || (b == '\n' && matched % 2 == 1)) {
        matched++;
      } else {
        matched = b == '\r' ? 1 : 0;
      }
    }
    String[] lines = head.toString(StandardCharsets.ISO_8859_1).split("\r\n");
    String[] first = lines[0].split(" ");
    if (first.length != 3 || !first[2].startsWith("HTTP/1.")) {
      throw new BadRequest(400, "malformed request line");
    }
    Map<String, String> headers = new LinkedHashMap<>();
    for (int i = 1; i < lines.length; i++) {
      int colon = lines[i].indexOf(':');
      if (colon <= 0) {
        throw new BadRequest(400, "malformed header");
      }
      String name = lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT);
      if (headers.putIfAbsent(name, lines[i].substring(colon + 1).trim()) != null
          && name.equals("host")) {
        throw new BadRequest(400, "more than one Host header");
      }
    }
    return new Request(first[0], first[1], headers);
  }

  /** localhost, 127.x.x.x or [::1], with or without a port. */
  public static boolean loopbackHost(String host) {
    if (host == null) {
      return true; // HTTP/1.0 tools; a browser (the rebinding attacker's tool) always sends one
    }
    String h = host.toLowerCase(Locale.ROOT);
    if (h.startsWith("[")) {
      int end = h.indexOf(']');
      return end > 0 && h.substring(1, end).equals("::1");
    }
    int colon = h.indexOf(':');
    if (colon >= 0) {
      h = h.substring(0, colon);
    }
    return h.equals("localhost") || h.matches("127\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}");
  }

  public static Response error(int status, String message) {
    String json = "{\"error\":\"" + message.replace("\\", "\\\\").replace("\"", "\\\"") + "\"}";
    return new Response(status, "application/json", json.getBytes(StandardCharsets.UTF_8));
  }

  private static void write(OutputStream out, String method, Response r) throws IOException {
    StringBuilder h = new StringBuilder();
    h.append("HTTP/1.1 ").append(r.status()).append(' ').append(reason(r.status())).append("\r\n");
    h.append("Content-Type: ").append(r.contentType()).append("\r\n");
    h.append("Content-Length: ").append(r.body().length).append("\r\n");
    r.headers().forEach((k, v) -> h.append(k).append(": ").append(v).append("\r\n"));
    h.append("Connection: close\r\n\r\n");
    out.write(h.toString().getBytes(StandardCharsets.ISO_8859_1));
    if (!"HEAD".equals(method)) {
      out.write(r.body());
    }
    out.flush();
  }

  private static String reason(int status) {
    return switch (status) {
      case 200 -> "OK";
      case 400 -> "Bad Request";
      case 404 -> "Not Found";
      case 405 -> "Method Not Allowed";
      case 408 -> "Request Timeout";
      case 421 -> "Misdirected Request";
      case 431 -> "Request Header Fields Too Large";
      case 503 -> "Service Unavailable";
      default -> "Status";
    };
  }

  private static final class BadRequest extends IOException {
    private static final long serialVersionUID = 1L;
    final int status;

    BadRequest(int status, String m) {
      super(m);
      this.status = status;
    }
  }

  @Override
  public void close() {
    running = false;
    try {
      socket.close();
    } catch (IOException ignored) {
      // closing
    }
    acceptor.interrupt();
    watchdog.shutdownNow();
    workers.shutdownNow();
    open.keySet()
        .forEach(
            s -> {
              try {
                s.close();
              } catch (IOException ignored) {
                // closing
              }
            });
  }
}
