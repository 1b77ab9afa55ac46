package dev.cudawatch.ingest.attribution;

import java.util.concurrent.TimeUnit;

/**
 * A counter that moves whenever an attribution lookup finishes, so the chain knows when a file's
 * cached answer may be out of date and a reader may wait, briefly, for an answer it expects.
 */
public final class Changes {
  private long generation;

  public synchronized long generation() {
    return generation;
  }

  synchronized void bump() {
    generation++;
    notifyAll();
  }

  /** Waits until the generation is no longer {@code seen}, at most {@code nanos}. */
  synchronized void await(long seen, long nanos) throws InterruptedException {
    long deadline = System.nanoTime() + nanos;
    while (generation == seen) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return;
      }
      TimeUnit.NANOSECONDS.timedWait(this, left);
    }
  }
}
