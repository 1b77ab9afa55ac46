package dev.cudawatch.common.cli;

import dev.cudawatch.common.config.ConfigException;
import java.io.PrintWriter;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;

/**
 * Runs a cudawatch command the same way everywhere: logging set from {@code --log-level}/{@code
 * --log-format} (or the environment) before the command starts, and an error turned into one line
 * on stderr: a configuration error ({@link ConfigException}, a port already in use) exits 2,
 * anything else 1; {@code --debug} adds the stack trace.
 */
public final class Cli {
  public static final int CONFIG_ERROR = 2;
  public static final int FAILURE = 1;

  private Cli() {}

  /** The command line for {@code command}, ready to execute. */
  public static CommandLine commandLine(Object command) {
    return configure(new CommandLine(command));
  }

  /** Adds cudawatch's execution strategy and error handling to a command line. */
  public static CommandLine configure(CommandLine cl) {
    return configure(cl, System.getenv());
  }

  static CommandLine configure(CommandLine cl, Map<String, String> env) {
    cl.setCaseInsensitiveEnumValuesAllowed(true);
    cl.setExecutionStrategy(
        parseResult -> {
          CommandLine last =
              parseResult.asCommandLineList().get(parseResult.asCommandLineList().size() - 1);
          try {
            Logging.apply(logOptions(last), env);
          } catch (ConfigException e) {
            return report(last, e, CONFIG_ERROR);
          }
          return new CommandLine.RunLast().execute(parseResult);
        });
    cl.setParameterExceptionHandler(
        (e, args) -> {
          CommandLine c = e.getCommandLine();
          c.getErr()
              .println("cudawatch " + c.getCommandName() + ": " + e.getMessage() + " (see --help)");
          c.getErr().flush();
          return CONFIG_ERROR;
        });
    cl.setExecutionExceptionHandler(
        (e, commandLine, parseResult) -> {
          if (e instanceof ConfigException || e instanceof java.net.BindException) {
            return report(commandLine, e, CONFIG_ERROR);
          }
          return report(commandLine, e, FAILURE);
        });
    return cl;
  }

  /**
   * A command's {@code main}: runs {@code command} with {@code args} and exits with its status (0,
   * {@link #CONFIG_ERROR}, {@link #FAILURE} or the command's own).
   */
  public static void main(Object command, String... args) {
    System.exit(execute(command, args));
  }

  /** Runs {@code command} with {@code args}; returns the exit status. */
  public static int execute(Object command, String... args) {
    return commandLine(command).execute(args);
  }

  private static int report(CommandLine cl, Exception e, int status) {
    PrintWriter err = cl.getErr();
    LogOptions options = logOptions(cl);
    boolean debug = options != null && options.debug();
    String message = e.getMessage() == null ? e.getClass().getName() : e.getMessage();
    if (e instanceof java.net.BindException) {
      message = "cannot listen: " + message + " (is the port in use? change http_port)";
    } else if (!(e instanceof ConfigException)) {
      message = e.getClass().getSimpleName() + ": " + message;
    }
    err.println(
        "cudawatch "
            + cl.getCommandName()
            + ": "
            + message.lines().findFirst().orElse("")
            + (debug ? "" : status == CONFIG_ERROR ? "" : " (--debug shows the stack trace)"));
    if (debug) {
      e.printStackTrace(err);
    }
    err.flush();
    return status;
  }

  /** The command's {@link LogOptions} mixin, or null when it has none. */
  static LogOptions logOptions(CommandLine cl) {
    CommandSpec spec = cl.getCommandSpec();
    for (CommandSpec mixin : spec.mixins().values()) {
      if (mixin.userObject() instanceof LogOptions o) {
        return o;
      }
    }
    return null;
  }
}
