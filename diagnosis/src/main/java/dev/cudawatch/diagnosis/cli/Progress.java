package dev.cudawatch.diagnosis.cli;

import java.io.PrintStream;

/** A progress bar on stderr for inputs over a few MB, only on a terminal. */
final class Progress {
  private static final long MIN_SIZE = 4L << 20;
  private final PrintStream err;
  private final long size;
  private final boolean on;
  private boolean drawn;

  Progress(PrintStream err, long size, boolean terminal) {
    this.err = err;
    this.size = size;
    this.on = terminal && size > MIN_SIZE;
  }

  void update(long chars) {
    if (!on) {
      return;
    }
    int pct = (int) Math.min(100, chars * 100 / size);
    err.print("\r[" + "#".repeat(pct / 5) + " ".repeat(20 - pct / 5) + "] " + pct + "%");
    drawn = true;
  }

  void done() {
    if (drawn) {
      err.print("\r" + " ".repeat(30) + "\r");
    }
  }
}
