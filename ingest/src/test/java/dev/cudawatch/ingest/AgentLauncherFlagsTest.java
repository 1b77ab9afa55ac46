package dev.cudawatch.ingest;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.ingest.proc.ExternalCommand;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The JVM flags bin/cudawatch gives the agent (bench/results/profile-agent.md): a 64 MB heap that
 * shrinks back, C2 alone; `run` keeps its own (its job inherits what the launcher sets). The real
 * launcher and the real JVM, which prints its flags and exits before the agent's main.
 */
class AgentLauncherFlagsTest {
  @TempDir Path tree;

  @Test
  void theAgentGetsASmallShrinkingHeapAndC2Alone() throws IOException {
    String flags = flags("agent");
    assertTrue(flags.contains("-XX:MaxHeapSize=67108864"), flags);
    assertTrue(flags.contains("-XX:MaxHeapFreeRatio=30"), flags);
    assertTrue(flags.contains("-XX:MinHeapFreeRatio=10"), flags);
    assertTrue(flags.contains("-XX:SurvivorRatio=3"), flags);
    assertTrue(flags.contains("-XX:-TieredCompilation"), flags);
    assertTrue(flags.contains("-XX:+UseSerialGC"), flags);
  }

  @Test
  void runKeepsItsHeapAndTieredCompilation() throws IOException {
    String flags = flags("run");
    assertTrue(flags.contains("-XX:MaxHeapSize=134217728"), flags);
    assertFalse(flags.contains("TieredCompilation"), flags);
  }

  /** What the JVM that bin/cudawatch starts for {@code command} prints of its flags. */
  private String flags(String command) throws IOException {
    // the launcher of this checkout in a tree of its own, beside a jar it only checks exists
    Path bin = Files.createDirectories(tree.resolve("bin"));
    Files.copy(Path.of("..", "bin", "cudawatch"), bin.resolve("cudawatch"));
    Files.createDirectories(tree.resolve("ingest/target"));
    Files.write(tree.resolve("ingest/target/cudawatch-agent.jar"), new byte[0]);
    ExternalCommand.Result r =
        ExternalCommand.run(
            List.of(
                "env",
                "JAVA_HOME=" + System.getProperty("java.home"),
                "JAVA_OPTS=-XX:+PrintCommandLineFlags -version",
                "bash",
                bin.resolve("cudawatch").toString(),
                command),
            Duration.ofSeconds(60));
    assertTrue(r.ok(), () -> r.outcome() + " " + r.exitCode());
    return r.output();
  }
}
