package dev.cudawatch.alerts;

import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Real Prometheus, promtool and Alertmanager from Debian's packages ({@code .ci/run} installs
 * them). Without them a test is skipped on a workstation, but fails in CI.
 */
public final class RealBinaries {
  private RealBinaries() {}

  public static Path require(String name) {
    Path p = Path.of("/usr/bin", name);
    if (!Files.isExecutable(p)) {
      String why = name + " is not installed (apt-get install prometheus prometheus-alertmanager)";
      if (System.getenv("CI") != null) {
        fail(why);
      }
      assumeTrue(false, why);
    }
    return p;
  }

  public static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }
}
