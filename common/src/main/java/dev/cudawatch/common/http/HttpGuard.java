package dev.cudawatch.common.http;

import dev.cudawatch.common.http.GuardedHttpServer.Handler;
import dev.cudawatch.common.http.GuardedHttpServer.Request;
import dev.cudawatch.common.http.GuardedHttpServer.Response;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The checks every cudawatch HTTP server makes before its handler, whatever carries the bytes
 * (Jetty in {@link GuardedHttpServer}, the JDK's server in the agent): the loopback {@code Host}
 * (421, DNS rebinding), basic auth (401), then the handler, whose failure is a 500. No Jetty class
 * here, so the agent's jar can leave Jetty out.
 */
public final class HttpGuard {
  private static final Logger LOG = LoggerFactory.getLogger(HttpGuard.class);

  private HttpGuard() {}

  /**
   * @param loopback whether the server is bound to a loopback address (then the Host is checked)
   * @param auth basic auth, or null for none
   */
  public static Response answer(Handler handler, boolean loopback, BasicAuth auth, Request r) {
    try {
      if (loopback && !loopbackHost(r.headers().get("host"))) {
        return error(421, "this server answers only to a loopback Host (DNS rebinding)");
      }
      if (auth != null && !auth.allows(r.headers().get("authorization"))) {
        return new Response(
            401,
            "application/json",
            error(401, "authentication required").body(),
            Map.of("WWW-Authenticate", "Basic realm=\"cudawatch\", charset=\"UTF-8\""));
      }
      return handler.handle(r);
    } catch (IOException | RuntimeException e) {
      LOG.error("http: handler failed", e);
      return error(500, "internal error");
    }
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
}
