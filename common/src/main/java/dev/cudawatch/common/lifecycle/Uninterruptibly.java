package dev.cudawatch.common.lifecycle;

import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Waits that a {@code close()} must finish even when its thread is interrupted (the state is saved
 * after them): each waits its whole bound, then sets the interrupt flag again, as Guava's
 * Uninterruptibles do. A close() that threw InterruptedException would make every
 * try-with-resources handle it.
 */
public final class Uninterruptibly {
  private Uninterruptibly() {}

  /** Joins {@code t} for at most {@code bound}. */
  public static void join(Thread t, Duration bound) {
    boolean interrupted = false;
    long deadline = System.nanoTime() + bound.toNanos();
    try {
      while (true) {
        long left = deadline - System.nanoTime();
        if (left <= 0 || !t.isAlive()) {
          return;
        }
        try {
          TimeUnit.NANOSECONDS.timedJoin(t, left);
          return;
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Waits at most {@code bound} for {@code pool}'s tasks to end after a shutdown. */
  public static void awaitTermination(ExecutorService pool, Duration bound) {
    boolean interrupted = false;
    long deadline = System.nanoTime() + bound.toNanos();
    try {
      while (true) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return;
        }
        try {
          pool.awaitTermination(left, TimeUnit.NANOSECONDS);
          return;
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
