package dev.cudawatch.ingest.spool;

import dev.cudawatch.ingest.ship.Shipper;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves records from a {@link DiskSpool} to Kafka and commits the spool's cursor past every record
 * the broker acknowledged. Acknowledgements from different partitions may come back out of order,
 * so the cursor only moves past the acknowledged prefix.
 */
public final class SpoolForwarder
    implements dev.cudawatch.ingest.lifecycle.StoppableSource, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(SpoolForwarder.class);

  private final DiskSpool spool;
  private final Shipper shipper;
  private final int maxInFlight;
  private final ArrayDeque<InFlight> inFlight = new ArrayDeque<>();
  private volatile boolean running = true;
  private volatile boolean loopRunning;
  private volatile Thread loopThread;
  private final java.util.concurrent.CountDownLatch stopped =
      new java.util.concurrent.CountDownLatch(1);
  private final java.util.concurrent.atomic.AtomicBoolean sendFailed =
      new java.util.concurrent.atomic.AtomicBoolean();
  private final java.util.concurrent.atomic.AtomicLong generation =
      new java.util.concurrent.atomic.AtomicLong();
  private long lastCommit = System.nanoTime() / 1_000_000 - 1_000; // due at once

  private static final class InFlight {
    final long seq;
    final long offsetAfter;
    final AtomicBoolean acked = new AtomicBoolean();

    InFlight(long seq, long offsetAfter) {
      this.seq = seq;
      this.offsetAfter = offsetAfter;
    }
  }

  public SpoolForwarder(DiskSpool spool, Shipper shipper, int maxInFlight) {
    this.spool = spool;
    this.shipper = shipper;
    this.maxInFlight = maxInFlight;
  }

  /** Spool payload: [2-byte key length][key][value]. */
  public static byte[] encode(byte[] key, byte[] value) {
    return ByteBuffer.allocate(2 + key.length + value.length)
        .putShort((short) key.length)
        .put(key)
        .put(value)
        .array();
  }

  @Override
  public void run() {
    loopThread = Thread.currentThread();
    loopRunning = true;
    try {
      loop();
    } finally {
      stopped.countDown();
    }
  }

  private void loop() {
    // a closed shipper ends the loop too: nothing may send to a closed producer
    while (running && !shipper.closed()) {
      try {
        if (sendFailed.get()) {
          // a send failed for good: read again from the last commit (the processor drops repeats)
          Thread.sleep(1000);
          synchronized (inFlight) {
            inFlight.clear();
          }
          generation.incrementAndGet();
          pendingCommit = null;
          spool.rewind();
          sendFailed.set(false);
          continue;
        }
        if (!commitAcked() && inFlight.size() >= maxInFlight) {
          Thread.sleep(5);
          continue;
        }
        DiskSpool.Entry e = spool.poll(100);
        if (e == null) {
          continue;
        }
        ByteBuffer b = ByteBuffer.wrap(e.bytes());
        int klen = b.getShort() & 0xffff;
        byte[] key = Arrays.copyOfRange(e.bytes(), 2, 2 + klen);
        byte[] value = Arrays.copyOfRange(e.bytes(), 2 + klen, e.bytes().length);
        InFlight f = new InFlight(e.seq(), e.offsetAfter());
        synchronized (inFlight) {
          inFlight.addLast(f);
        }
        long gen = generation.get();
        shipper.sendRaw(
            key,
            value,
            () -> f.acked.set(true),
            () -> {
              if (gen == generation.get()) {
                sendFailed.set(true);
              }
            });
      } catch (InterruptedException ex) {
        Thread.currentThread().interrupt();
        return;
      } catch (IOException | RuntimeException ex) {
        if (!running || shipper.closed()) {
          return; // a send woken by the shipper closing at shutdown: read again next start
        }
        warn(ex);
      }
    }
  }

  private String lastWarning;
  private long lastWarningAt;

  /**
   * Logs a failure once, and again only when it changes or a minute passed: a full disk fails every
   * commit, several a second.
   */
  private void warn(Exception ex) {
    long now = System.nanoTime() / 1_000_000;
    String w = ex.toString();
    if (!w.equals(lastWarning) || now - lastWarningAt >= 60_000) {
      LOG.warn("spool forwarding: {}", w);
      lastWarning = w;
      lastWarningAt = now;
    }
  }

  /** Commits past the acknowledged prefix; true when anything was committed. */
  boolean commitAcked() throws IOException {
    InFlight last = null;
    synchronized (inFlight) {
      while (!inFlight.isEmpty() && inFlight.peekFirst().acked.get()) {
        last = inFlight.pollFirst();
      }
    }
    long now = System.nanoTime() / 1_000_000; // an interval: the monotonic clock
    if (last != null && (now - lastCommit >= 200 || inFlight.isEmpty())) {
      spool.commit(last.seq, last.offsetAfter);
      lastCommit = now;
    } else if (last != null) {
      pendingCommit = last;
    }
    if (last == null && pendingCommit != null && now - lastCommit >= 200) {
      spool.commit(pendingCommit.seq, pendingCommit.offsetAfter);
      pendingCommit = null;
      lastCommit = now;
    }
    return last != null;
  }

  private InFlight pendingCommit;

  /** Records read from the spool and not yet acknowledged. */
  public int inFlight() {
    synchronized (inFlight) {
      return inFlight.size();
    }
  }

  @Override
  public boolean stopRequested() {
    return !running;
  }

  /**
   * Tells the loop to stop and waits up to {@code timeout} for it to end; false if it is still
   * running (blocked sending to a broker that is away: closing the shipper wakes it).
   */
  public boolean stop(java.time.Duration timeout) {
    running = false;
    if (!loopRunning) {
      return true;
    }
    try {
      return stopped.await(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /**
   * Stops after committing what was acknowledged. Waits for the loop to end first, so nothing
   * writes the spool after close() returns (a reaper may delete it then); a loop still blocked in a
   * send after 10 s is interrupted. What was read and not acknowledged stays past the cursor.
   */
  @Override
  public void close() throws IOException {
    if (!stop(java.time.Duration.ofSeconds(10))) { // a round ends within a poll
      Thread t = loopThread;
      if (t != null) {
        t.interrupt();
      }
      stop(java.time.Duration.ofSeconds(1));
    }
    shipper.flush();
    try {
      commitAcked();
      if (pendingCommit != null) {
        spool.commit(pendingCommit.seq, pendingCommit.offsetAfter);
        pendingCommit = null;
      }
    } catch (IOException e) {
      // a full disk: the cursor stays where it was saved last, so the next start sends the
      // records after it again (repeats are dropped by id); nothing is lost
      LOG.warn(
          "spool cursor not saved at stop ({}): records after it are sent again", e.toString());
    }
  }
}
