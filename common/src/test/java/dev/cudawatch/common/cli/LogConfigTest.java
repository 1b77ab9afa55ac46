package dev.cudawatch.common.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.Appender;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.ConsoleAppender;
import org.apache.logging.log4j.core.appender.FileAppender;
import org.apache.logging.log4j.core.appender.NullAppender;
import org.apache.logging.log4j.core.config.json.JsonConfiguration;
import org.apache.logging.log4j.core.layout.PatternLayout;
import org.apache.logging.log4j.layout.template.json.JsonTemplateLayout;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The jars' one Log4j configuration (common's log4j2.json): which appender each setting picks. */
class LogConfigTest {
  @TempDir Path dir;

  @AfterEach
  void clearProperties() {
    for (String p :
        new String[] {
          Logging.LEVEL_PROPERTY,
          Logging.LIBS_PROPERTY,
          Logging.FORMAT_PROPERTY,
          Logging.TARGET_PROPERTY,
          Logging.FILE_PROPERTY
        }) {
      System.clearProperty(p);
    }
    org.apache.logging.log4j.core.config.Configurator.reconfigure();
  }

  private static Appender err() {
    var config = LoggerContext.getContext(false).getConfiguration();
    // the jars' JSON file, read without the JDK's XML parser
    assertInstanceOf(JsonConfiguration.class, config);
    return config.getRootLogger().getAppenders().get("err");
  }

  @Test
  void byDefaultPlainLinesOnStderrCudawatchAtInfoLibrariesAtWarn() {
    org.apache.logging.log4j.core.config.Configurator.reconfigure();
    var err = assertInstanceOf(ConsoleAppender.class, err());
    assertEquals(ConsoleAppender.Target.SYSTEM_ERR, err.getTarget());
    assertInstanceOf(PatternLayout.class, err.getLayout());
    assertEquals(Level.INFO, LogManager.getLogger("dev.cudawatch.x").getLevel());
    assertEquals(Level.WARN, LogManager.getLogger("org.apache.kafka.x").getLevel());
    assertEquals(Level.ERROR, LogManager.getLogger("org.apache.pekko.x").getLevel());
  }

  @Test
  void jsonFormatIsEcsJsonOnStderr() {
    Logging.apply(null, Map.of("CUDAWATCH_LOG_FORMAT", "json"));
    var err = assertInstanceOf(ConsoleAppender.class, err());
    assertEquals(ConsoleAppender.Target.SYSTEM_ERR, err.getTarget());
    assertInstanceOf(JsonTemplateLayout.class, err.getLayout());
  }

  @Test
  void aFileTargetWinsOverTheFormatAndGetsTheLines() throws Exception {
    Logging.apply(null, Map.of("CUDAWATCH_LOG_FORMAT", "json"));
    Path file = dir.resolve("run.log");
    Logging.redirect(file);
    assertInstanceOf(FileAppender.class, err());
    LogManager.getLogger("dev.cudawatch.LogConfigTest").warn("to the file");
    assertTrue(Files.readString(file).contains("WARN  LogConfigTest: to the file"));
  }

  @Test
  void noTargetDropsTheLines() {
    Logging.redirect(null);
    assertInstanceOf(NullAppender.class, err());
  }

  /** The Kafka sink's start-up line about no lingering transactions is dropped; others are not. */
  @Test
  void noLingeringTransactionsIsNotAWarningButSomeAre() throws Exception {
    Path file = dir.resolve("run.log");
    Logging.redirect(file);
    var log =
        LogManager.getLogger(
            "org.apache.flink.connector.kafka.sink.internal.TransactionAbortStrategyImpl");
    log.warn("Found 0 open transactions for subtask 0: []");
    log.warn("Found 2 open transactions for subtask 1: [a, b]");
    String lines = Files.readString(file);
    assertTrue(!lines.contains("Found 0"), lines);
    assertTrue(lines.contains("Found 2 open transactions for subtask 1"), lines);
  }
}
