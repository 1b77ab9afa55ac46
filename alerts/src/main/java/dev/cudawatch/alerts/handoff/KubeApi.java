package dev.cudawatch.alerts.handoff;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.regex.Pattern;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * The calls of the Kubernetes hand-off on the Kubernetes API, over the JDK's HTTP client (a client
 * library would bring dozens of jars for four requests): read a node and patch its status (node
 * conditions), create an Event and patch its series (pod Events). In-cluster auth as client-go does
 * it: the service account's bearer token (read from its file before each call, since kubelet
 * rotates it; never logged) and trust in the cluster's CA only.
 */
final class KubeApi {
  /** A node name is a DNS subdomain: nothing else may reach the request path. */
  private static final Pattern NODE_NAME =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

  static final String STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json";
  static final String MERGE_PATCH = "application/merge-patch+json";

  /** A namespace is a DNS label. */
  private static final Pattern NAMESPACE = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");

  private final URI base;
  private final Path tokenFile;
  private final Duration timeout;
  private final HttpClient http;

  KubeApi(NodeConditionSettings s) {
    String url = s.apiServerUrl();
    this.base = URI.create(url.endsWith("/") ? url : url + "/");
    this.tokenFile = Path.of(s.tokenFile());
    this.timeout = Duration.ofMillis(s.timeoutMs());
    HttpClient.Builder b =
        HttpClient.newBuilder()
            .connectTimeout(timeout)
            .followRedirects(HttpClient.Redirect.NEVER); // a redirect must not carry the token
    if ("https".equals(base.getScheme())) {
      b.sslContext(trusting(Path.of(s.caFile())));
    }
    this.http = b.build();
  }

  static boolean validNodeName(String name) {
    return name != null && name.length() <= 253 && NODE_NAME.matcher(name).matches();
  }

  /** GET /api/v1/nodes/{node}. */
  HttpResponse<String> getNode(String node) throws IOException, InterruptedException {
    return send(request(node, "").GET().build());
  }

  /** PATCH /api/v1/nodes/{node}/status with a strategic merge patch. */
  HttpResponse<String> patchStatus(String node, byte[] patch)
      throws IOException, InterruptedException {
    return send(
        request(node, "/status")
            .header("Content-Type", STRATEGIC_MERGE_PATCH)
            .method("PATCH", HttpRequest.BodyPublishers.ofByteArray(patch))
            .build());
  }

  static boolean validNamespace(String ns) {
    return ns != null && NAMESPACE.matcher(ns).matches();
  }

  /** POST /apis/events.k8s.io/v1/namespaces/{ns}/events. */
  HttpResponse<String> createEvent(String ns, byte[] event)
      throws IOException, InterruptedException {
    return send(
        at(eventsPath(ns, ""))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofByteArray(event))
            .build());
  }

  /** PATCH /apis/events.k8s.io/v1/namespaces/{ns}/events/{name} with a JSON merge patch. */
  HttpResponse<String> patchEvent(String ns, String name, byte[] patch)
      throws IOException, InterruptedException {
    if (!validNodeName(name)) {
      throw new IllegalArgumentException("not an event name");
    }
    return send(
        at(eventsPath(ns, "/" + name))
            .header("Content-Type", MERGE_PATCH)
            .method("PATCH", HttpRequest.BodyPublishers.ofByteArray(patch))
            .build());
  }

  private static String eventsPath(String ns, String sub) {
    if (!validNamespace(ns)) {
      throw new IllegalArgumentException("not a namespace");
    }
    return "apis/events.k8s.io/v1/namespaces/" + ns + "/events" + sub;
  }

  private HttpRequest.Builder request(String node, String sub) throws IOException {
    if (!validNodeName(node)) {
      throw new IllegalArgumentException("not a node name");
    }
    return at("api/v1/nodes/" + node + sub);
  }

  private HttpRequest.Builder at(String path) throws IOException {
    return HttpRequest.newBuilder(base.resolve(path))
        .timeout(timeout)
        .header("Accept", "application/json")
        .header("User-Agent", "cudawatch-alerts")
        .header("Authorization", "Bearer " + token());
  }

  private HttpResponse<String> send(HttpRequest r) throws IOException, InterruptedException {
    return http.send(r, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
  }

  private String token() throws IOException {
    try {
      String t = Files.readString(tokenFile, StandardCharsets.UTF_8).trim();
      if (t.isEmpty()) {
        throw new IOException("service account token file is empty: " + tokenFile);
      }
      return t;
    } catch (java.nio.file.NoSuchFileException e) {
      throw new IOException("no service account token file: " + tokenFile);
    }
  }

  /** An SSL context that trusts the certificates in {@code caFile} and nothing else. */
  static SSLContext trusting(Path caFile) {
    try (InputStream in = Files.newInputStream(caFile)) {
      KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
      ks.load(null, null);
      int n = 0;
      for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
        ks.setCertificateEntry("ca-" + n++, c);
      }
      if (n == 0) {
        throw new IllegalStateException("node_conditions.ca_file: no certificate in " + caFile);
      }
      TrustManagerFactory tmf =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(ks);
      SSLContext ctx = SSLContext.getInstance("TLS");
      ctx.init(null, tmf.getTrustManagers(), null);
      return ctx;
    } catch (IOException e) {
      throw new IllegalStateException(
          "node_conditions.ca_file: cannot read "
              + caFile
              + " ("
              + e.getClass().getSimpleName()
              + ")");
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(
          "node_conditions.ca_file: not a PEM certificate: "
              + caFile
              + " ("
              + e.getMessage()
              + ")");
    }
  }
}
