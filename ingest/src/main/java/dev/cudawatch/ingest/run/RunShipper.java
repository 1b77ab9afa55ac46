package dev.cudawatch.ingest.run;

import dev.cudawatch.ingest.framing.FramedLine;
import dev.cudawatch.ingest.framing.LineFramer;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The one thread that turns a wrapped job's output into records and spools them: it opens the spool
 * and Kafka's client, cuts the bytes into lines, builds records with what is known of the job, and
 * at the end records the exit and waits a bounded time for Kafka. Everything slow or fallible of
 * `run` happens here, never on the job's output path; a {@link Throwable} of any kind (an {@link
 * OutOfMemoryError} on a huge line included) stops shipping, said once, and the job goes on.
 */
public final class RunShipper implements Runnable {
  private final RunOutputQueue queue;
  private final Supplier<RunShipping> open;
  private final RunIdentity identity;
  private final RunNotices notices;
  private final int maxLineBytes;
  private final Map<String, LineFramer> framers = new HashMap<>();
  private final Map<String, Long> lastEnd = new HashMap<>();
  private final CountDownLatch done = new CountDownLatch(1);
  private volatile RunShipping shipping;
  private volatile ExitStatus exit;
  private volatile List<String> command;
  private volatile long deadlineNanos;
  private volatile boolean shipped;
  private volatile boolean failed;

  public RunShipper(
      RunOutputQueue queue,
      Supplier<RunShipping> open,
      RunIdentity identity,
      RunNotices notices,
      int maxLineBytes) {
    this.queue = queue;
    this.open = open;
    this.identity = identity;
    this.notices = notices;
    this.maxLineBytes = maxLineBytes;
  }

  @Override
  public void run() {
    try {
      shipping = open.get();
      for (RunOutputQueue.Chunk c; (c = queue.poll(100)) != null || !queue.drained(); ) {
        if (c != null) {
          ship(c);
        }
      }
      if (exit != null) {
        shipping.write(identity.records().exit(command, exit));
      }
      shipped = shipping.finish(deadlineNanos);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Throwable e) {
      failed = true;
      framers.clear(); // frees a huge line's buffer
      notices.degraded("shipping stopped (" + e + "); the job's output still passes through");
      if (shipping != null) {
        shipping.stop();
      }
    } finally {
      done.countDown();
    }
  }

  private void ship(RunOutputQueue.Chunk c) throws InterruptedException {
    String stream = c.stream();
    LineFramer f = framers.get(stream);
    if (f == null || c.gap() > 0) {
      // bytes were dropped: the line they cut is lost, the next starts after them
      long at = f == null ? c.gap() : position(stream) + c.gap();
      f = new LineFramer(maxLineBytes, true, at);
      framers.put(stream, f);
      positions.put(stream, at);
    }
    if (c.end()) {
      f.flush(l -> line(stream, l));
      Long end = lastEnd.get(stream);
      if (end != null) {
        shipping.write(identity.records().quiet(stream, end));
      }
      return;
    }
    positions.merge(stream, (long) c.bytes().length, Long::sum);
    f.feed(c.bytes(), 0, c.bytes().length, l -> line(stream, l));
  }

  private final Map<String, Long> positions = new HashMap<>();

  /** Bytes of {@code stream} seen so far (shipped or cut by a gap). */
  private long position(String stream) {
    return positions.getOrDefault(stream, 0L);
  }

  private void line(String stream, FramedLine l) {
    lastEnd.put(stream, l.end());
    try {
      shipping.write(identity.records().line(stream, l));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * The job ended with {@code status}: records it after the output already queued, and waits for
   * shipping to finish until {@code deadlineNanos} (of {@link System#nanoTime()}), a little more at
   * most. True when all was shipped.
   */
  public boolean finish(List<String> command, ExitStatus status, long deadlineNanos)
      throws InterruptedException {
    this.command = command;
    this.exit = status;
    this.deadlineNanos = deadlineNanos;
    identity.hurry();
    queue.close();
    if (!done.await(
        Math.max(0, deadlineNanos - System.nanoTime()) + 500_000_000L, TimeUnit.NANOSECONDS)) {
      queue.abandon(); // output the job wrote faster than it could be spooled: counted, not shipped
    }
    return shipped;
  }

  /** True when shipping stopped on an error of its own. */
  public boolean failed() {
    return failed;
  }

  /** The shipping of this run, once opened (null before). */
  public RunShipping shipping() {
    return shipping;
  }
}
