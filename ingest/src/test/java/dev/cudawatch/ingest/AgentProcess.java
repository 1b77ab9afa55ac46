package dev.cudawatch.ingest;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The agent as a real process ({@code java ... AgentMain --config FILE}) with its stdout and stderr
 * appended to a file; closing it kills what is still running (a test that failed midway).
 */
final class AgentProcess implements AutoCloseable {
  final Process process;
  final Path out;

  private AgentProcess(Process process, Path out) {
    this.process = process;
    this.out = out;
  }

  static AgentProcess start(Path config, Path out, String... extraEnv) throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    ProcessBuilder pb =
        new ProcessBuilder(
                java,
                "-Xmx128m",
                // the suite's run-spool root: the agent adopts no spool another program left
                "-Dcudawatch.run_spool_root="
                    + System.getProperty("cudawatch.run_spool_root", "/var/tmp"),
                "-XX:+UseSerialGC",
                "-cp",
                System.getProperty("java.class.path"),
                AgentMain.class.getName(),
                "--config",
                config.toString())
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(out.toFile()));
    for (int i = 0; i + 1 < extraEnv.length; i += 2) {
      pb.environment().put(extraEnv[i], extraEnv[i + 1]);
    }
    return new AgentProcess(pb.start(), out);
  }

  /** What the agent printed so far. */
  String output() throws Exception {
    return Files.exists(out) ? Files.readString(out, StandardCharsets.UTF_8) : "";
  }

  /** Lines it printed after the first {@code from} characters. */
  List<String> linesAfter(int from) throws Exception {
    String all = output();
    return all.substring(Math.min(from, all.length())).lines().filter(l -> !l.isBlank()).toList();
  }

  @Override
  public void close() throws InterruptedException {
    if (process.isAlive()) {
      process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
  }
}
