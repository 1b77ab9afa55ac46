package dev.cudawatch.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Test;

/**
 * The shaded agent jar holds only the natives the agent loads, for the two platforms of GPU nodes
 * (Linux x86_64, and aarch64 for Grace and GH200), and none of the dependencies it never calls. The
 * shade filters (the parent pom) are a deny list, so a dependency upgrade that adds a platform
 * fails here instead of growing the package again. Runs after {@code package}.
 */
class ShadedJarContentsIT {
  static final Path JAR = Path.of("target/cudawatch-agent.jar");

  /** What the agent loads, each for x86_64 and aarch64: exactly these natives, nothing else. */
  static final Map<String, Pattern> NATIVES =
      Map.of(
          "netty epoll (the kubelet's unix socket)",
          Pattern.compile(
              "META-INF/native/libio_grpc_netty_shaded_netty_transport_native_epoll_"
                  + "(x86_64|aarch_64)\\.so"),
          "jna (cudawatch run's posix_spawn, closefrom)",
          Pattern.compile("com/sun/jna/linux-(x86-64|aarch64)/libjnidispatch\\.so"),
          "lz4 (the agent's compression.type)",
          Pattern.compile("net/jpountz/util/linux/(amd64|aarch64)/liblz4-java\\.so"),
          "zstd (an operator's compression.type)",
          Pattern.compile("linux/(amd64|aarch64)/libzstd-jni-[0-9.-]+\\.so"),
          "snappy (an operator's compression.type)",
          Pattern.compile("org/xerial/snappy/native/Linux/(x86_64|aarch64)/libsnappyjava\\.so"));

  static final Pattern NATIVE =
      Pattern.compile("(?i).*\\.(so|dll|dylib|jnilib|a)$|^META-INF/native/[^/]+$");

  /** Packages of dependencies the agent never calls (and that once were shaded in). */
  static final List<String> ABSENT =
      List.of(
          "com/google/rpc/", // proto-google-common-protos: grpc's StatusProto only
          "com/google/api/",
          "io/prometheus/metrics/exporter/", // AgentEndpoint serves /metrics itself
          "io/prometheus/metrics/expositionformats/internal/", // the protobuf format
          "io/prometheus/metrics/shaded/",
          "org/eclipse/jetty/"); // the agent serves HTTP with the JDK's server (AgentHttpServer)

  @Test
  void onlyTheLinuxNativesTheAgentLoads() throws Exception {
    assertTrue(Files.exists(JAR), JAR.toAbsolutePath() + " is missing: run through verify");
    List<String> natives = new ArrayList<>();
    List<String> unused = new ArrayList<>();
    try (ZipFile z = new ZipFile(JAR.toFile())) {
      for (ZipEntry e : z.stream().toList()) {
        if (e.isDirectory()) {
          continue;
        }
        if (NATIVE.matcher(e.getName()).matches()) {
          natives.add(e.getName());
        }
        if (ABSENT.stream().anyMatch(e.getName()::startsWith)) {
          unused.add(e.getName());
        }
      }
    }
    Map<String, List<String>> byWhat = new TreeMap<>();
    List<String> unexpected = new ArrayList<>();
    for (String n : natives) {
      String what =
          NATIVES.entrySet().stream()
              .filter(w -> w.getValue().matcher(n).matches())
              .map(Map.Entry::getKey)
              .findFirst()
              .orElse(null);
      if (what == null) {
        unexpected.add(n);
      } else {
        byWhat.computeIfAbsent(what, k -> new ArrayList<>()).add(n);
      }
    }
    assertEquals(List.of(), unexpected, "natives for other platforms, or that nothing loads");
    for (String what : NATIVES.keySet()) {
      assertEquals(
          2,
          byWhat.getOrDefault(what, List.of()).size(),
          what + ": one for x86_64 and one for aarch64, found " + byWhat.get(what));
    }
    assertEquals(
        List.of(), unused.stream().limit(5).toList(), "dependencies the agent never calls");
    long mb = Files.size(JAR) >> 20;
    // 51 MB before the filters, 29 MB after; then run's diagnosis (classify's engine) and Jetty
    // came in (Jetty left again: the agent serves HTTP with the JDK's server): a bound that a
    // platform's natives coming back (+20 MB) would break
    assertTrue(mb < 40, "the agent jar is " + mb + " MB");
  }
}
