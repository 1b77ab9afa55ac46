package dev.cudawatch.common.cli;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/**
 * The version and git commit this build was made from, read from {@code
 * /cudawatch/build.properties} (filtered by the build; the commit comes from
 * git-commit-id-maven-plugin and is {@code unknown} in a copy without {@code .git}).
 *
 * @param version the Maven project version
 * @param revision the abbreviated commit, or {@code unknown}
 */
public record BuildInfo(String version, String revision) {
  public static final String UNKNOWN = "unknown";
  private static final String RESOURCE = "/cudawatch/build.properties";

  private static final BuildInfo CURRENT = read();

  public static BuildInfo current() {
    return CURRENT;
  }

  /** {@code cudawatch 0.1.0 (commit 5d6d386)}: what {@code --version} prints. */
  public String line() {
    return "cudawatch " + version + " (commit " + revision + ")";
  }

  static BuildInfo read() {
    Properties p = new Properties();
    try (InputStream in = BuildInfo.class.getResourceAsStream(RESOURCE)) {
      if (in != null) {
        p.load(in);
      }
    } catch (IOException e) {
      // a damaged jar still runs; it only cannot say what it is
    }
    return new BuildInfo(clean(p.getProperty("version")), clean(p.getProperty("revision")));
  }

  /** An unfiltered {@code ${...}} placeholder or a blank value means the build did not know. */
  static String clean(String v) {
    return v == null || v.isBlank() || v.contains("${") ? UNKNOWN : v.strip();
  }
}
