package dev.cudawatch.ingest.run;

import java.io.PrintStream;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What `run` may say on the job's stderr, which is the job's: at most one line when shipping
 * degrades (the first cause; later ones are not news to the researcher) and one at the end when
 * output was left spooled or not shipped. Everything else goes to cudawatch's log file or nowhere.
 */
public final class RunNotices {
  private final PrintStream console;
  private final AtomicBoolean degraded = new AtomicBoolean();
  private final AtomicBoolean ended = new AtomicBoolean();

  public RunNotices(PrintStream console) {
    this.console = console;
  }

  /** Shipping got worse; printed only the first time. */
  public void degraded(String why) {
    if (degraded.compareAndSet(false, true)) {
      print(why);
    }
  }

  /** The one closing line. */
  public void end(String line) {
    if (ended.compareAndSet(false, true)) {
      print(line);
    }
  }

  /** Lines printed so far (0 to 2). */
  int printed() {
    return (degraded.get() ? 1 : 0) + (ended.get() ? 1 : 0);
  }

  private void print(String line) {
    try {
      console.println("cudawatch run: " + line);
      console.flush();
    } catch (RuntimeException e) {
      // the job's stderr is gone: nothing to tell
    }
  }
}
