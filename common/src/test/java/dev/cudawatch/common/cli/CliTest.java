package dev.cudawatch.common.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.config.ConfigException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Map;
import java.util.concurrent.Callable;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

class CliTest {
  @Command(name = "demo", mixinStandardHelpOptions = true, versionProvider = VersionProvider.class)
  static final class Demo implements Callable<Integer> {
    @CommandLine.Mixin LogOptions logOptions;

    @Option(names = "--fail")
    String fail;

    @Override
    public Integer call() throws Exception {
      if ("config".equals(fail)) {
        throw new ConfigException("demo.yaml:3: http_port: must be 0..65535");
      }
      if ("bug".equals(fail)) {
        throw new IllegalStateException("something broke");
      }
      return 0;
    }
  }

  private final StringWriter err = new StringWriter();
  private final StringWriter out = new StringWriter();

  @AfterEach
  void clearProperties() {
    System.clearProperty(Logging.LEVEL_PROPERTY);
    System.clearProperty(Logging.LIBS_PROPERTY);
    System.clearProperty(Logging.FORMAT_PROPERTY);
    org.apache.logging.log4j.core.config.Configurator.reconfigure();
  }

  private int run(Map<String, String> env, String... args) {
    CommandLine cl = Cli.configure(new CommandLine(new Demo()), env);
    cl.setErr(new PrintWriter(err, true));
    cl.setOut(new PrintWriter(out, true));
    return cl.execute(args);
  }

  @Test
  void aConfigurationErrorIsOneLineAndExitTwoTheTraceOnlyWithDebug() {
    assertEquals(2, run(Map.of(), "--fail", "config"));
    assertEquals("cudawatch demo: demo.yaml:3: http_port: must be 0..65535\n", err.toString());
    err.getBuffer().setLength(0);
    assertEquals(2, run(Map.of(), "--fail", "config", "--debug"));
    assertTrue(err.toString().contains("\tat dev.cudawatch.common.cli.CliTest$Demo.call"));
  }

  @Test
  void otherFailuresExitOneAndBadOptionsTwoEachOnOneLine() {
    assertEquals(1, run(Map.of(), "--fail", "bug"));
    assertEquals(
        "cudawatch demo: IllegalStateException: something broke (--debug shows the stack trace)\n",
        err.toString());
    err.getBuffer().setLength(0);
    assertEquals(2, run(Map.of(), "--nope"));
    assertEquals("cudawatch demo: Unknown option: '--nope' (see --help)\n", err.toString());
  }

  @Test
  void versionComesFromTheBuild() {
    assertEquals(0, run(Map.of(), "--version"));
    BuildInfo b = BuildInfo.current();
    assertEquals("cudawatch " + b.version() + " (commit " + b.revision() + ")\n", out.toString());
    assertFalse(b.version().contains("${"), "the build filtered build.properties");
    assertEquals(BuildInfo.UNKNOWN, BuildInfo.clean("${git.commit.id.abbrev}"));
    assertEquals(BuildInfo.UNKNOWN, BuildInfo.clean(" "));
    assertEquals("abc1234", BuildInfo.clean("abc1234"));
  }

  @Test
  void theLevelComesFromTheOptionElseTheEnvironmentAndReachesLog4j() {
    assertEquals(0, run(Map.of("CUDAWATCH_LOG_LEVEL", "debug")));
    assertEquals(Level.DEBUG, LogManager.getLogger("dev.cudawatch.x").getLevel());
    assertEquals(Level.WARN, LogManager.getLogger("org.apache.kafka.x").getLevel());
    assertEquals(0, run(Map.of("CUDAWATCH_LOG_LEVEL", "debug"), "--log-level", "ERROR"));
    assertEquals(Level.ERROR, LogManager.getLogger("dev.cudawatch.y").getLevel());
    assertEquals(Level.ERROR, LogManager.getLogger("org.apache.kafka.y").getLevel());
    assertEquals(2, run(Map.of("CUDAWATCH_LOG_FORMAT", "xml")));
    assertTrue(
        err.toString().contains("environment variable CUDAWATCH_LOG_FORMAT: unknown value 'xml'"),
        err.toString());
  }
}
