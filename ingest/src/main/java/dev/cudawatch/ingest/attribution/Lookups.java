package dev.cudawatch.ingest.attribution;

import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where attribution's slow lookups run (scontrol, the sidecar directory, the kubelet, a pass over
 * /proc), off the agent's read thread: a fixed number of daemon threads and a queue with a cap, one
 * lookup per key at a time (a second request for a key already queued or running is dropped, its
 * answer serves both), and {@link Changes} moved when each one ends. A full queue rejects and
 * counts: the caller asks again later, the line ships with what is known.
 */
public final class Lookups implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Lookups.class);

  private final ThreadPoolExecutor pool; // null: run in the caller (tests, one-shot tools)
  private final Changes changes;
  private final Set<String> pending = ConcurrentHashMap.newKeySet();
  private final AtomicLong started = new AtomicLong();
  private final AtomicLong rejected = new AtomicLong();

  private Lookups(ThreadPoolExecutor pool, Changes changes) {
    this.pool = pool;
    this.changes = changes;
  }

  /**
   * {@code threads} daemon threads named {@code cudawatch-NAME-N}, at most {@code queue} waiting.
   */
  public static Lookups pool(String name, int threads, int queue, Changes changes) {
    AtomicInteger n = new AtomicInteger();
    ThreadPoolExecutor pool =
        new ThreadPoolExecutor(
            threads,
            threads,
            30,
            TimeUnit.SECONDS,
            new ArrayBlockingQueue<>(queue),
            r -> {
              Thread t = new Thread(r, "cudawatch-" + name + "-" + n.incrementAndGet());
              t.setDaemon(true); // a hung helper program must never keep the agent alive
              return t;
            },
            new ThreadPoolExecutor.AbortPolicy());
    pool.allowCoreThreadTimeOut(true);
    return new Lookups(pool, changes);
  }

  /** Runs each lookup at once in the caller's thread: for tests and one-shot tools. */
  public static Lookups inline(Changes changes) {
    return new Lookups(null, changes);
  }

  public Changes changes() {
    return changes;
  }

  /**
   * Runs {@code work} for {@code key} unless a lookup for it is already queued or running; false
   * when it was (or the queue is full).
   */
  public boolean submit(String key, Runnable work) {
    if (!pending.add(key)) {
      return false;
    }
    Runnable task =
        () -> {
          try {
            started.incrementAndGet();
            work.run();
          } catch (RuntimeException | Error e) {
            LOG.debug("attribution lookup {} failed: {}", key, e.toString());
          } finally {
            pending.remove(key);
            changes.bump();
          }
        };
    if (pool == null) {
      task.run();
      return true;
    }
    try {
      pool.execute(task);
      return true;
    } catch (RejectedExecutionException e) {
      pending.remove(key);
      rejected.incrementAndGet();
      return false;
    }
  }

  /** Whether a lookup for {@code key} is queued or running. */
  public boolean pending(String key) {
    return pending.contains(key);
  }

  /** Lookups run (started). */
  public long started() {
    return started.get();
  }

  /** Lookups refused because the queue was full. */
  public long rejected() {
    return rejected.get();
  }

  @Override
  public void close() {
    if (pool != null) {
      pool.shutdownNow(); // helper programs die at their own deadline (ExternalCommand)
    }
  }
}
