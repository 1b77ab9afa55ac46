package dev.cudawatch.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.kafka.embedded.EmbeddedKafkaBroker;
import dev.cudawatch.testkit.Await;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Quick start's screen: what {@code cudawatch local} prints on stdout and stderr holds
 * cudawatch's own lines, no library's warnings: not until it says it is running (Flink's
 * TaskExecutorResourceUtils printed one of 700+ characters per memory option before), not once its
 * job carries lines (Flink's network buffer pool warned at 129 % of its memory), and not as it
 * stops on SIGTERM (a checkpoint cancelled, a closed executor, a Kafka client closed twice).
 */
class LocalFirstScreenIT {
  @TempDir Path dir;
  Process local;

  @AfterEach
  void stop() throws InterruptedException {
    if (local != null && local.isAlive()) {
      local.destroy();
      if (!local.waitFor(60, TimeUnit.SECONDS)) {
        local.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    }
  }

  @Test
  void theScreenHasNoLibraryWarningsFromStartToStop() throws Exception {
    Path out = dir.resolve("local.out");
    local =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx1g",
                // the shipped logging configuration, not the tests' (log4j2-test.xml)
                "-Dlog4j2.configurationFile=classpath:log4j2.json",
                "-cp",
                System.getProperty("java.class.path"),
                LocalMain.class.getName(),
                "--http-port",
                String.valueOf(EmbeddedKafkaBroker.freePort()),
                "--data-dir",
                dir.resolve("data").toString(),
                "--logs",
                dir.resolve("logs").toString(),
                "--no-kernel-log",
                "--no-gpu-samples")
            .directory(dir.toFile())
            .redirectErrorStream(true) // the screen: both streams, in the order they came
            .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
            .redirectOutput(out.toFile())
            .start();

    String screen =
        Await.until(
            "local to say it is running",
            () -> {
              String text = Files.readString(out);
              if (!local.isAlive() && !text.contains("cudawatch local: running")) {
                throw new AssertionError("local exited " + local.exitValue() + ":\n" + text);
              }
              return text;
            },
            text -> text.contains("cudawatch local: running"),
            Duration.ofMinutes(4));

    List<String> lines =
        screen.substring(0, screen.indexOf("cudawatch local: running")).lines().toList();
    // the console's pattern is "HH:mm:ss LEVEL Logger: message"; cudawatch's own lines say
    // "cudawatch local: ..." and carry no level
    List<String> warnings =
        lines.stream().filter(l -> l.matches("^\\d\\d:\\d\\d:\\d\\d (WARN|ERROR) .*")).toList();
    assertEquals(List.of(), warnings, "warnings on local's first screen:\n" + screen);
    assertTrue(
        lines.stream().allMatch(l -> l.length() < 300),
        "no line of a screen's width times three:\n" + screen);

    // a job fails: its line crosses every part (agent, broker, job, alerts) at parallelism 2
    Files.createDirectories(dir.resolve("logs"));
    Files.writeString(
        dir.resolve("logs").resolve("train.log"),
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total"
            + " capacity of 79.15 GiB of which 1.05 GiB is free.\n");
    Await.until(
        "the failure's alert on the screen",
        () -> Files.readString(out),
        text -> text.contains("ALERT firing GpuJobFailure"),
        Duration.ofMinutes(2));
    local.destroy(); // SIGTERM, as Ctrl-C or systemd stop it
    assertTrue(local.waitFor(2, TimeUnit.MINUTES), "local stops on SIGTERM");
    String session = Files.readString(out);
    assertTrue(session.contains("cudawatch local: stopping"), session);
    List<String> later =
        session.lines().filter(l -> l.matches("^\\d\\d:\\d\\d:\\d\\d (WARN|ERROR) .*")).toList();
    assertEquals(List.of(), later, "warnings while running or stopping:\n" + session);
  }
}
