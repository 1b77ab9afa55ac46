package dev.cudawatch.diagnosis.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.diagnosis.taxonomy.Taxonomy;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class ClassesCommandTest {
  private static List<String> run(String... args) {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(buf, true, StandardCharsets.UTF_8);
    assertEquals(0, new CommandLine(new ClassesCommand(out)).execute(args));
    return buf.toString(StandardCharsets.UTF_8).lines().toList();
  }

  @Test
  void listsEveryClassWithItsDefaults() {
    List<String> lines = run();
    assertEquals(Taxonomy.builtIn().ids().size(), lines.size());
    assertTrue(
        lines.stream()
            .anyMatch(l -> l.matches("cuda_oom\\s+error\\s+application\\s+CUDA out of memory")),
        lines.toString());
  }

  @Test
  void listsTheXidCatalogWithVerdicts() {
    List<String> lines = run("--xids");
    assertEquals(172, lines.size());
    assertTrue(
        lines.stream()
            .anyMatch(
                l -> l.matches(" 79\\s+hardware\\s+critical\\s+GPU has fallen off the bus.*")),
        lines.get(78));
  }
}
