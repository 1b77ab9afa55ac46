package dev.cudawatch.alerts.handoff;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLContext;

/**
 * A real HTTP(S) server that answers the two node calls as kube-apiserver does (no API server can
 * run on this machine): bearer-token auth, GET of a node, and PATCH of its status subresource with
 * a strategic merge patch, where {@code status.conditions} merge by their {@code type} (the
 * NodeCondition merge key) and everything outside {@code status} is ignored, as the subresource
 * does. Any other content type is refused with 415, as the API server does for PATCH.
 */
public final class ApiServerDouble implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final HttpServer server;
  private final String token;
  final Map<String, ObjectNode> nodes = new LinkedHashMap<>();
  final List<String> requests = new ArrayList<>();
  final AtomicInteger failNext = new AtomicInteger(); // answer 500 to this many requests

  public ApiServerDouble(String token, SSLContext tls) throws IOException {
    this.token = token;
    InetSocketAddress at = new InetSocketAddress("127.0.0.1", 0);
    if (tls == null) {
      server = HttpServer.create(at, 0);
    } else {
      HttpsServer s = HttpsServer.create(at, 0);
      s.setHttpsConfigurator(new HttpsConfigurator(tls));
      server = s;
    }
    server.createContext("/", this::handle);
    server.start();
  }

  public String url() {
    String scheme = server instanceof HttpsServer ? "https" : "http";
    return scheme + "://127.0.0.1:" + server.getAddress().getPort();
  }

  public synchronized void addNode(String name) {
    ObjectNode n = JSON.createObjectNode();
    n.put("kind", "Node").put("apiVersion", "v1");
    n.putObject("metadata").put("name", name);
    n.putObject("spec");
    ArrayNode conditions = n.putObject("status").putArray("conditions");
    conditions
        .addObject()
        .put("type", "Ready")
        .put("status", "True")
        .put("reason", "KubeletReady")
        .put("lastTransitionTime", "2026-11-01T00:00:00Z");
    nodes.put(name, n);
  }

  /** The node's condition of {@code type}, or null. */
  public synchronized JsonNode condition(String node, String type) {
    for (JsonNode c : nodes.get(node).path("status").path("conditions")) {
      if (type.equals(c.path("type").asText())) {
        return c.deepCopy();
      }
    }
    return null;
  }

  public synchronized List<String> requests() {
    return List.copyOf(requests);
  }

  private synchronized void handle(HttpExchange x) throws IOException {
    String method = x.getRequestMethod();
    String path = x.getRequestURI().getRawPath();
    requests.add(method + " " + path);
    byte[] body = x.getRequestBody().readAllBytes();
    if (!("Bearer " + token).equals(x.getRequestHeaders().getFirst("Authorization"))) {
      reply(x, 401, status(401, "Unauthorized"));
      return;
    }
    if (failNext.get() > 0) {
      failNext.decrementAndGet();
      reply(x, 500, status(500, "InternalError"));
      return;
    }
    String prefix = "/api/v1/nodes/";
    if (!path.startsWith(prefix)) {
      reply(x, 404, status(404, "NotFound"));
      return;
    }
    String rest = path.substring(prefix.length());
    boolean sub = rest.endsWith("/status");
    String name = sub ? rest.substring(0, rest.length() - "/status".length()) : rest;
    ObjectNode node = nodes.get(name);
    if (node == null) {
      reply(x, 404, status(404, "NotFound"));
      return;
    }
    if (method.equals("GET") && !sub) {
      reply(x, 200, node);
    } else if (method.equals("PATCH") && sub) {
      if (!KubeApi.STRATEGIC_MERGE_PATCH.equals(x.getRequestHeaders().getFirst("Content-Type"))) {
        reply(x, 415, status(415, "UnsupportedMediaType"));
        return;
      }
      JsonNode patch = JSON.readTree(body);
      mergeStatus((ObjectNode) node.get("status"), patch.path("status"));
      reply(x, 200, node);
    } else {
      reply(x, 405, status(405, "MethodNotAllowed"));
    }
  }

  /** Strategic merge of a status: conditions by type, other keys replaced. */
  private static void mergeStatus(ObjectNode status, JsonNode patch) {
    patch
        .fields()
        .forEachRemaining(
            e -> {
              if (!e.getKey().equals("conditions")) {
                status.set(e.getKey(), e.getValue());
                return;
              }
              ArrayNode have = (ArrayNode) status.get("conditions");
              for (JsonNode c : e.getValue()) {
                ObjectNode match = null;
                for (JsonNode h : have) {
                  if (h.path("type").equals(c.path("type"))) {
                    match = (ObjectNode) h;
                  }
                }
                if (match == null) {
                  have.add(c.deepCopy());
                } else {
                  match.setAll((ObjectNode) c); // the patch's fields win, others are kept
                }
              }
            });
  }

  private static ObjectNode status(int code, String reason) {
    ObjectNode s = JSON.createObjectNode();
    s.put("kind", "Status").put("status", "Failure").put("reason", reason).put("code", code);
    return s;
  }

  private static void reply(HttpExchange x, int code, JsonNode body) throws IOException {
    byte[] b = JSON.writeValueAsString(body).getBytes(StandardCharsets.UTF_8);
    x.getResponseHeaders().set("Content-Type", "application/json");
    x.sendResponseHeaders(code, b.length);
    x.getResponseBody().write(b);
    x.close();
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
