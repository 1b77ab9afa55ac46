package dev.cudawatch.common.cli;

/** {@code bin/cudawatch --version}: prints the build's version and commit. */
public final class VersionMain {
  private VersionMain() {}

  public static void main(String[] args) {
    System.out.println(BuildInfo.current().line());
  }
}
