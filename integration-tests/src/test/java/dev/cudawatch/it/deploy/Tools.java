package dev.cudawatch.it.deploy;

import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Programs the deploy tests run (kubectl, node, npm, slurmctld...). Without one a test is skipped
 * on a workstation, but fails in CI (CI set), naming the package that provides it.
 */
final class Tools {
  private Tools() {}

  static Path require(String name, String installHint) {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      Path p = Path.of(dir, name);
      if (Files.isExecutable(p)) {
        return p;
      }
    }
    for (String dir : List.of("/usr/sbin", "/usr/bin", "/sbin")) {
      Path p = Path.of(dir, name);
      if (Files.isExecutable(p)) {
        return p;
      }
    }
    unavailable(name + " is not installed (" + installHint + ")");
    return null;
  }

  /** Skips the test here, fails it in CI. */
  static void unavailable(String why) {
    if (System.getenv("CI") != null) {
      fail(why);
    }
    assumeTrue(false, why);
  }

  record Result(int exit, String out) {}

  /** Runs a command to its end (bounded), stdout and stderr together. */
  static Result run(Path cwd, long timeoutSeconds, List<String> cmd) throws Exception {
    Process p =
        new ProcessBuilder(cmd)
            .directory(cwd.toFile())
            .redirectErrorStream(true)
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
            .start();
    // read on another thread so that a full pipe cannot stall the process
    var out = new java.io.ByteArrayOutputStream();
    Thread reader =
        new Thread(
            () -> {
              try {
                p.getInputStream().transferTo(out);
              } catch (java.io.IOException ignored) {
                // the process ended
              }
            });
    reader.start();
    if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      fail(String.join(" ", cmd) + " did not finish in " + timeoutSeconds + " s");
    }
    reader.join();
    return new Result(p.exitValue(), out.toString(StandardCharsets.UTF_8));
  }
}
