package dev.cudawatch.common.config;

/**
 * Configuration that cannot be used; the message names the file, key and reason. Commands turn it
 * into one line on stderr and exit status 2 ({@link dev.cudawatch.common.cli.Cli}).
 */
public class ConfigException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final String key;

  public ConfigException(String message) {
    super(message);
    this.key = null;
  }

  public ConfigException(String message, Throwable cause) {
    super(message, cause);
    this.key = null;
  }

  private ConfigException(String key, String reason) {
    super(key + ": " + reason);
    this.key = key;
  }

  /** A bad value at a dotted key, located later by whoever knows the file. */
  public static ConfigException atKey(String key, String reason) {
    return new ConfigException(key, reason);
  }

  /** The dotted key this error is about, or null when the message already says where. */
  public String key() {
    return key;
  }
}
