package dev.cudawatch.common.config;

/** A config section that checks its own values after loading. */
public interface Validated {
  /**
   * Throws {@link ConfigException} naming the first bad value.
   *
   * @param path the section's dotted path, for messages
   */
  void validate(String path);

  /** Fails with {@code path: message} unless {@code ok}. */
  static void require(boolean ok, String path, String message) {
    if (!ok) {
      throw ConfigException.atKey(path, message);
    }
  }
}
