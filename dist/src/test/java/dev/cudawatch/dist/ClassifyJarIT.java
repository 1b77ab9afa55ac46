package dev.cudawatch.dist;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The classify jar alone, as a researcher runs it: the one downloaded file, copied away from the
 * build, run with a plain Java 17 ({@code java -jar}), diagnoses a sample log.
 */
class ClassifyJarIT {
  @TempDir Path dir;

  @Test
  void theJarAloneDiagnosesASample() throws Exception {
    Path jar = Files.copy(Cmd.artifact("cudawatch-classify-", ".jar"), dir.resolve("classify.jar"));
    Path log =
        Files.copy(Cmd.REPO.resolve("samples/illegal_address_torch.log"), dir.resolve("job.log"));
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();

    Cmd text =
        Cmd.run(
            List.of(java, "-jar", jar.toString(), log.toString()),
            dir,
            Map.of(),
            Duration.ofMinutes(2));
    assertEquals(0, text.status(), text.out());
    assertTrue(text.out().contains("ROOT CAUSE  illegal_memory_access"), text.out());

    // --fail-on error: exit 1 for a failed job, as the Slurm epilog step relies on
    Cmd failOn =
        Cmd.run(
            List.of(java, "-jar", jar.toString(), "--json", "--fail-on", "error", log.toString()),
            dir,
            Map.of(),
            Duration.ofMinutes(2));
    assertEquals(1, failOn.status(), failOn.out());
    assertTrue(failOn.out().contains("\"class\":\"illegal_memory_access\""), failOn.out());
  }
}
