package dev.cudawatch.testkit;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;

/**
 * The one way tests wait: poll a probe until the state the test asserts holds, or fail with what
 * was last observed. Tests never sleep to let something happen; they wait for it here.
 *
 * <p>Polling starts at 5 ms and backs off to 200 ms, so a quick state is seen quickly and a slow
 * one does not burn a core the system under test needs. A probe that throws counts as "not yet" (a
 * server not listening yet, a file not written yet); its last exception is in the failure.
 */
public final class Await {
  private static final long FIRST_PAUSE_MS = 5;
  private static final long MAX_PAUSE_MS = 200;

  private Await() {}

  /** Waits until {@code condition} is true. */
  public static void until(String what, BooleanSupplier condition, Duration timeout) {
    until(what, condition::getAsBoolean, Boolean.TRUE::equals, timeout);
  }

  /**
   * Waits until {@code probe}'s value satisfies {@code done} and returns that value; on timeout
   * fails with {@code what} and the last value observed (or the probe's last exception).
   */
  public static <T> T until(
      String what, Callable<T> probe, Predicate<? super T> done, Duration timeout) {
    Objects.requireNonNull(what, "what");
    long deadline = System.nanoTime() + timeout.toNanos();
    long pause = FIRST_PAUSE_MS;
    T last = null;
    Exception lastError = null;
    while (true) {
      try {
        last = probe.call();
        lastError = null;
        if (done.test(last)) {
          return last;
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted while waiting for " + what, e);
      } catch (Exception e) {
        lastError = e;
      }
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        String seen =
            lastError != null
                ? "the probe failed: " + lastError
                : "last observed: " + abbreviate(String.valueOf(last));
        AssertionError failure =
            new AssertionError(
                "timed out after " + timeout.toMillis() + " ms waiting for " + what + "; " + seen);
        if (lastError != null) {
          failure.initCause(lastError);
        }
        throw failure;
      }
      try {
        // the pause between polls is the helper's job: this is the only sleep a wait needs
        Thread.sleep(Math.min(pause, Math.max(1, left / 1_000_000)));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted while waiting for " + what, e);
      }
      pause = Math.min(MAX_PAUSE_MS, pause * 2);
    }
  }

  private static String abbreviate(String s) {
    return s.length() <= 2_000 ? s : s.substring(0, 2_000) + "... (" + s.length() + " chars)";
  }
}
