package dev.cudawatch.ingest.ship;

import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.kafka.common.errors.InterruptException;

/**
 * Bounds the bytes of records sent and not yet acknowledged, before compression. The producer's
 * {@code buffer.memory} counts compressed batches: 8 MiB of lz4 batches of training-log lines held
 * ~100,000 records, and each keeps its value, its callbacks and its line on the heap until
 * acknowledged, more than a 64 MB heap holds (measured: 27-41 MB live after every full collection,
 * a full collection every 0.2 s). Waiting here is the same back-pressure as waiting for the
 * producer's buffer, counted in what the heap holds.
 */
final class InFlightBytes {
  private final int limit;
  private final Semaphore free;

  InFlightBytes(int limit) {
    this.limit = limit;
    this.free = new Semaphore(limit);
  }

  /**
   * Takes {@code bytes} (a record larger than the limit takes all of it, so it still goes alone),
   * waiting while they are not free; returns what was taken, to give back. Gives up once {@code
   * closed}, as a send blocked on the producer's buffer is woken by its close.
   */
  int take(int bytes, BooleanSupplier closed) {
    int n = Math.max(1, Math.min(bytes, limit));
    try {
      while (!free.tryAcquire(n, 100, TimeUnit.MILLISECONDS)) {
        if (closed.getAsBoolean()) {
          throw new IllegalStateException("the shipper is closed");
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptException(e); // as the producer's own send does when interrupted
    }
    return n;
  }

  void give(int n) {
    free.release(n);
  }

  /** Bytes taken now. */
  int taken() {
    return limit - free.availablePermits();
  }
}
