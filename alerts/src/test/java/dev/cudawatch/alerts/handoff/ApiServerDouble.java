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
 * does. Any other content type is refused with 415, as the API server does for PATCH. Events
 * ({@code events.k8s.io/v1}): create (validated as the API server validates the fields an Event
 * must have: 422 otherwise, 409 for a name taken) and JSON-merge-patch (404 for an unknown one).
 */
public final class ApiServerDouble implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final HttpServer server;
  private final String token;
  final Map<String, ObjectNode> nodes = new LinkedHashMap<>();
  final List<String> requests = new ArrayList<>();
  final Map<String, ObjectNode> events = new LinkedHashMap<>(); // by namespace/name
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
    if (path.startsWith(EVENTS)) {
      event(x, method, path.substring(EVENTS.length()), body);
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

  private static final String EVENTS = "/apis/events.k8s.io/v1/namespaces/";

  /** The Events held, oldest first. */
  public synchronized List<JsonNode> events() {
    return events.values().stream().map(e -> (JsonNode) e.deepCopy()).toList();
  }

  private void event(HttpExchange x, String method, String rest, byte[] body) throws IOException {
    String[] p = rest.split("/", -1); // ns, "events"[, name]
    if (p.length < 2 || !p[1].equals("events") || p.length > 3) {
      reply(x, 404, status(404, "NotFound"));
      return;
    }
    String ns = p[0];
    if (method.equals("POST") && p.length == 2) {
      if (!"application/json".equals(x.getRequestHeaders().getFirst("Content-Type"))) {
        reply(x, 415, status(415, "UnsupportedMediaType"));
        return;
      }
      JsonNode e = JSON.readTree(body);
      String name = e.path("metadata").path("name").asText();
      boolean valid =
          "events.k8s.io/v1".equals(e.path("apiVersion").asText())
              && "Event".equals(e.path("kind").asText())
              && !name.isEmpty()
              && ns.equals(e.path("metadata").path("namespace").asText())
              && e.path("eventTime").asText().matches("\\d{4}-\\d\\d-\\d\\dT[\\d:]{8}\\.\\d{6}Z")
              && e.path("reportingController").asText().matches("[a-z0-9.-]+/[a-z0-9.-]+")
              && !e.path("reportingInstance").asText().isEmpty()
              && e.path("reportingInstance").asText().length() <= 128
              && !e.path("action").asText().isEmpty()
              && !e.path("reason").asText().isEmpty()
              && e.path("reason").asText().length() <= 128
              && e.path("note").asText().length() <= 1024
              && List.of("Normal", "Warning").contains(e.path("type").asText())
              && "Pod".equals(e.path("regarding").path("kind").asText())
              && ns.equals(e.path("regarding").path("namespace").asText());
      if (!valid) {
        reply(x, 422, status(422, "Invalid"));
        return;
      }
      if (events.containsKey(ns + "/" + name)) {
        reply(x, 409, status(409, "AlreadyExists"));
        return;
      }
      events.put(ns + "/" + name, (ObjectNode) e);
      reply(x, 201, e);
    } else if (method.equals("PATCH") && p.length == 3) {
      if (!KubeApi.MERGE_PATCH.equals(x.getRequestHeaders().getFirst("Content-Type"))) {
        reply(x, 415, status(415, "UnsupportedMediaType"));
        return;
      }
      ObjectNode e = events.get(ns + "/" + p[2]);
      if (e == null) {
        reply(x, 404, status(404, "NotFound"));
        return;
      }
      mergePatch(e, JSON.readTree(body));
      reply(x, 200, e);
    } else {
      reply(x, 405, status(405, "MethodNotAllowed"));
    }
  }

  /** RFC 7386: objects merge key by key, null deletes, anything else replaces. */
  private static void mergePatch(ObjectNode target, JsonNode patch) {
    patch
        .properties()
        .forEach(
            f -> {
              if (f.getValue().isNull()) {
                target.remove(f.getKey());
              } else if (f.getValue().isObject()
                  && target.get(f.getKey()) instanceof ObjectNode o) {
                mergePatch(o, f.getValue());
              } else {
                target.set(f.getKey(), f.getValue().deepCopy());
              }
            });
  }

  /** Strategic merge of a status: conditions by type, other keys replaced. */
  private static void mergeStatus(ObjectNode status, JsonNode patch) {
    patch
        .properties()
        .forEach(
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
