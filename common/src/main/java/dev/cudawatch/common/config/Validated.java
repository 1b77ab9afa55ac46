package dev.cudawatch.common.config;

import java.net.URI;

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

  /** An http(s) URL with a host; the message never repeats the URL, which may hold a token. */
  public static void httpUrl(String url, String key) {
    if (url == null) {
      return;
    }
    URI u;
    try {
      u = URI.create(url);
    } catch (IllegalArgumentException e) {
      throw new ConfigException(key + ": not a valid URL");
    }
    require(
        "http".equals(u.getScheme()) || "https".equals(u.getScheme()),
        key,
        "must be an http:// or https:// URL");
    require(u.getHost() != null && !u.getHost().isBlank(), key, "must name a host");
  }
}
