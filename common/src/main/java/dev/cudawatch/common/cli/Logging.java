package dev.cudawatch.common.cli;

import dev.cudawatch.common.config.ConfigException;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;

/**
 * Applies the log level and format to the one Log4j 2 configuration every jar carries ({@code
 * log4j2.json} of common), through system properties it reads. The option wins over {@code
 * CUDAWATCH_LOG_LEVEL}/{@code CUDAWATCH_LOG_FORMAT}; a jar without Log4j (classify) ignores both.
 */
public final class Logging {
  public static final String LEVEL_PROPERTY = "cudawatch.log.level";
  public static final String LIBS_PROPERTY = "cudawatch.log.libs";
  public static final String FORMAT_PROPERTY = "cudawatch.log.format";
  public static final String TARGET_PROPERTY = "cudawatch.log.target";
  public static final String FILE_PROPERTY = "cudawatch.log.file";

  private Logging() {}

  /** Sets the properties and, when Log4j is already running, reloads its configuration. */
  public static void apply(LogOptions options, Map<String, String> env) {
    LogOptions.Level level =
        options != null && options.level() != null
            ? options.level()
            : parse(LogOptions.Level.class, env.get("CUDAWATCH_LOG_LEVEL"), "CUDAWATCH_LOG_LEVEL");
    LogOptions.Format format =
        options != null && options.format() != null
            ? options.format()
            : parse(
                LogOptions.Format.class, env.get("CUDAWATCH_LOG_FORMAT"), "CUDAWATCH_LOG_FORMAT");
    if (level == null && format == null) {
      return;
    }
    if (level != null) {
      System.setProperty(LEVEL_PROPERTY, level.name());
      // libraries speak at WARN; only a quieter level makes them quieter too
      System.setProperty(
          LIBS_PROPERTY, level == LogOptions.Level.ERROR ? "ERROR" : LogOptions.Level.WARN.name());
    }
    if (format != null) {
      System.setProperty(FORMAT_PROPERTY, format.name().toLowerCase(Locale.ROOT));
    }
    if (log4jPresent()) {
      Log4jReload.reload();
    }
  }

  /**
   * Sends every log line of this process, cudawatch's and its libraries', to {@code file}
   * (appended), or nowhere when it is null: for {@code cudawatch run}, whose stderr is the job's.
   */
  public static void redirect(java.nio.file.Path file) {
    if (file == null) {
      System.setProperty(TARGET_PROPERTY, "none");
    } else {
      System.setProperty(FILE_PROPERTY, file.toAbsolutePath().toString());
      System.setProperty(TARGET_PROPERTY, "file");
    }
    if (log4jPresent()) {
      Log4jReload.reload();
    }
  }

  /**
   * Keeps only the libraries' errors from now on: for a one-process setup that is stopping, whose
   * Flink and Kafka parts warn about each other having stopped first (a checkpoint cancelled, a
   * command ignored by a closed executor, a client closed twice). Their errors still show.
   */
  public static void librariesErrorsOnly() {
    System.setProperty(LIBS_PROPERTY, LogOptions.Level.ERROR.name());
    if (log4jPresent()) {
      Log4jReload.reload();
    }
  }

  private static <E extends Enum<E>> E parse(Class<E> type, String value, String var) {
    if (value == null || value.isBlank()) {
      return null;
    }
    try {
      return Enum.valueOf(type, value.strip().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new ConfigException(
          "environment variable "
              + var
              + ": unknown value '"
              + value
              + "' (use "
              + Arrays.toString(type.getEnumConstants()).toLowerCase(Locale.ROOT)
              + ")");
    }
  }

  private static boolean log4jPresent() {
    try {
      Class.forName(
          "org.apache.logging.log4j.core.LoggerContext", false, Logging.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  /** Apart, so that a jar without log4j-core never loads its classes. */
  private static final class Log4jReload {
    static void reload() {
      org.apache.logging.log4j.core.config.Configurator.reconfigure();
    }
  }
}
