package dev.cudawatch.diagnosis.offline;

import java.io.IOException;

/** The file is binary (a core dump, a checkpoint, a tarball), not a log: it is skipped. */
public final class BinaryLogException extends IOException {
  private static final long serialVersionUID = 1L;

  public BinaryLogException() {
    super("binary file (not a log); skipped");
  }
}
