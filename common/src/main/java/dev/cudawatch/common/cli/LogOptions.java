package dev.cudawatch.common.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The options every command takes, as a picocli mixin ({@code @Mixin LogOptions logOptions}):
 * {@code --help} and {@code --version} (the build's, from {@link VersionProvider}), the log level
 * and format, and {@code --debug} for an error's stack trace. {@link Cli} reads them before the
 * command runs.
 */
@Command(mixinStandardHelpOptions = true, versionProvider = VersionProvider.class)
public final class LogOptions {
  /** Levels for cudawatch's own loggers; libraries stay at WARN unless this is quieter. */
  public enum Level {
    ERROR,
    WARN,
    INFO,
    DEBUG,
    TRACE
  }

  /** Console lines for people, or one JSON object per line (ECS) for log shippers. */
  public enum Format {
    TEXT,
    JSON
  }

  @Option(
      names = "--log-level",
      paramLabel = "LEVEL",
      description =
          "cudawatch's log level: ${COMPLETION-CANDIDATES} (default: $CUDAWATCH_LOG_LEVEL, else"
              + " INFO)")
  Level level;

  @Option(
      names = "--log-format",
      paramLabel = "FORMAT",
      description = "log lines on stderr: text or json (default: $CUDAWATCH_LOG_FORMAT, else text)")
  Format format;

  @Option(names = "--debug", description = "show the stack trace of an error")
  boolean debug;

  public boolean debug() {
    return debug;
  }

  public Level level() {
    return level;
  }

  public Format format() {
    return format;
  }
}
