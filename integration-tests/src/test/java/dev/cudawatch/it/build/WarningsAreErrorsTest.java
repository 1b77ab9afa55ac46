package dev.cudawatch.it.build;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The parent pom's javac arguments, applied to code with one new warning, fail the compile: a
 * warning can't land. Read from the pom itself, so loosening the flags there fails this test.
 */
class WarningsAreErrorsTest {
  @TempDir Path dir;

  /** The main compile's arguments: the first compilerArgs block of the parent pom. */
  static List<String> mainCompilerArgs() throws Exception {
    String pom = Files.readString(Path.of("..", "pom.xml"));
    Matcher block =
        Pattern.compile("<compilerArgs>(.*?)</compilerArgs>", Pattern.DOTALL).matcher(pom);
    assertTrue(block.find(), "the parent pom configures javac's arguments");
    List<String> args = new ArrayList<>();
    Matcher arg = Pattern.compile("<arg>([^<]+)</arg>").matcher(block.group(1));
    while (arg.find()) {
      args.add(arg.group(1).trim());
    }
    return args;
  }

  @Test
  void theMainCompileTreatsEveryWarningAsAnError() throws Exception {
    List<String> args = mainCompilerArgs();
    assertTrue(args.contains("-Xlint:all"), "every lint category: " + args);
    assertTrue(args.contains("-Werror"), "warnings fail the build: " + args);
  }

  @Test
  void aNewWarningFailsTheCompile() throws Exception {
    Path clean = write("Clean.java", "class Clean { int f() { return 1; } }");
    Path warns =
        write(
            "Warns.java",
            "import java.util.*;\n"
                + "class Warns { List raw() { return new ArrayList(); } }\n"); // rawtypes
    ByteArrayOutputStream cleanErr = new ByteArrayOutputStream();
    assertEquals(0, javac(clean, cleanErr), "the same flags compile clean code: " + cleanErr);
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int rc = javac(warns, err);
    String out = err.toString(StandardCharsets.UTF_8);
    assertTrue(rc != 0, "a warning fails the compile: " + out);
    assertTrue(out.contains("warnings found and -Werror specified"), out);
  }

  private Path write(String name, String source) throws Exception {
    return Files.writeString(dir.resolve(name), source);
  }

  private int javac(Path source, ByteArrayOutputStream err) throws Exception {
    List<String> cmd = new ArrayList<>(mainCompilerArgs());
    // as the pom's <proc>none</proc>, and none of this JVM's classpath (log4j-core has a processor)
    cmd.addAll(
        List.of(
            "-proc:none",
            // this JVM's own class path names a folder this module never makes (no main code):
            // a warning about the test's surroundings, not about the code compiled
            "-Xlint:-path",
            "--release",
            "17",
            "-d",
            dir.resolve("out").toString(),
            source.toString()));
    try (PrintStream ps = new PrintStream(err, true, StandardCharsets.UTF_8)) {
      return ToolProvider.getSystemJavaCompiler().run(null, null, ps, cmd.toArray(String[]::new));
    }
  }
}
