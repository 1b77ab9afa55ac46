package dev.cudawatch.dist;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** A command run to its end with a deadline: its status and its output (stdout and stderr). */
record Cmd(int status, String out) {
  static final Path DIST = Path.of(System.getProperty("dist.dir", "target")).toAbsolutePath();
  static final Path REPO =
      Path.of(System.getProperty("repo.dir", "..")).toAbsolutePath().normalize();
  static final String VERSION = System.getProperty("dist.version", "0.1.0-SNAPSHOT");

  static Cmd run(List<String> command) throws IOException, InterruptedException {
    return run(command, null, Map.of(), Duration.ofMinutes(5));
  }

  /**
   * Runs {@code command} in {@code dir} (null: here); {@code env} replaces the environment when it
   * is not empty, so a test says exactly what PATH and variables the program sees.
   */
  static Cmd run(List<String> command, Path dir, Map<String, String> env, Duration timeout)
      throws IOException, InterruptedException {
    Path out = Files.createTempFile("cudawatch-dist-", ".out");
    try {
      ProcessBuilder pb =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(out.toFile())
              .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
      if (dir != null) {
        pb.directory(dir.toFile());
      }
      if (!env.isEmpty()) {
        pb.environment().clear();
        pb.environment().putAll(env);
      }
      Process p = pb.start();
      if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        throw new AssertionError(
            command + " did not end in " + timeout + ":\n" + Files.readString(out));
      }
      return new Cmd(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
    } finally {
      Files.deleteIfExists(out);
    }
  }

  /** Runs it and fails the test with its output when it does not exit 0. */
  static String ok(String... command) throws IOException, InterruptedException {
    Cmd c = run(List.of(command));
    if (c.status() != 0) {
      throw new AssertionError(
          String.join(" ", command) + " exited " + c.status() + ":\n" + c.out());
    }
    return c.out();
  }

  /**
   * The one file in dist/target whose name starts with {@code prefix} and ends with {@code suffix}.
   */
  static Path artifact(String prefix, String suffix) throws IOException {
    try (var files = Files.list(DIST)) {
      List<Path> found =
          files
              .filter(f -> f.getFileName().toString().startsWith(prefix))
              .filter(f -> f.getFileName().toString().endsWith(suffix))
              .toList();
      if (found.size() != 1) {
        throw new AssertionError(
            "expected one "
                + prefix
                + "*"
                + suffix
                + " in "
                + DIST
                + " (./mvnw package): "
                + found);
      }
      return found.get(0);
    }
  }
}
