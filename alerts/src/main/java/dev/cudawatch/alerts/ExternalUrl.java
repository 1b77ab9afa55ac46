package dev.cudawatch.alerts;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The address people reach the alerts service at, for the links in notifications: {@code
 * notifications.external_url} when set, else the address it really serves ({@code http_host} and
 * the port it bound). A wildcard host (0.0.0.0, ::) is nobody's address: the machine's hostname
 * stands in for it, which is right on a node and in Docker Compose; behind a Kubernetes Service or
 * an ingress, set {@code external_url}.
 */
public final class ExternalUrl {
  private static final Set<String> WILDCARDS =
      Set.of("", "0.0.0.0", "::", "[::]", "0:0:0:0:0:0:0:0");

  private ExternalUrl() {}

  /** The base URL, without a trailing slash. */
  public static String of(String configured, String httpHost, int port) {
    return of(configured, httpHost, port, ExternalUrl::hostname);
  }

  static String of(String configured, String httpHost, int port, Supplier<String> hostname) {
    if (configured != null) {
      return configured.replaceAll("/+$", "");
    }
    String host = httpHost == null || WILDCARDS.contains(httpHost) ? hostname.get() : httpHost;
    if (host.contains(":") && !host.startsWith("[")) {
      host = "[" + host + "]"; // an IPv6 literal
    }
    return "http://" + host + ":" + port;
  }

  /** The machine's name, as {@code hostname} prints it; "localhost" if it has none. */
  static String hostname() {
    try {
      String h = InetAddress.getLocalHost().getHostName();
      return h == null || h.isBlank() ? "localhost" : h;
    } catch (UnknownHostException e) {
      // the name does not resolve: getLocalHost's message begins with it ("name: name: ...")
      String m = e.getMessage();
      int colon = m == null ? -1 : m.indexOf(':');
      return colon > 0 ? m.substring(0, colon) : "localhost";
    }
  }
}
