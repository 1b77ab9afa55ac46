package dev.cudawatch.common.cli;

import picocli.CommandLine.IVersionProvider;

/** {@code --version} of every command: the build's version and commit. */
public final class VersionProvider implements IVersionProvider {
  @Override
  public String[] getVersion() {
    return new String[] {BuildInfo.current().line()};
  }
}
