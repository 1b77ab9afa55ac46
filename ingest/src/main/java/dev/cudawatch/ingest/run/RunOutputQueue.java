package dev.cudawatch.ingest.run;

import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The hand-off from the job's output pumps to the shipping thread: the bytes the job wrote, as
 * read, at most {@code maxBytes} of them waiting. An offer never blocks and never throws: when
 * shipping falls behind (a slow disk, nvidia-smi awaited) bytes are dropped and their lines
 * counted, never the job's output; the next chunk then says how many bytes it follows a gap of.
 */
public final class RunOutputQueue {
  /** Bytes of a stream after {@code gap} dropped ones; {@code bytes} null: the stream ended. */
  record Chunk(String stream, byte[] bytes, long gap) {
    boolean end() {
      return bytes == null;
    }
  }

  private final long maxBytes;
  private final ArrayDeque<Chunk> chunks = new ArrayDeque<>();
  private final java.util.Map<String, Long> gaps = new java.util.HashMap<>();
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition notEmpty = lock.newCondition();
  private final AtomicLong droppedLines = new AtomicLong();
  private long bytes;
  private boolean closed;

  public RunOutputQueue(long maxBytes) {
    this.maxBytes = maxBytes;
  }

  /** Queues a copy of {@code n} bytes of {@code stream}, or drops and counts them. */
  void offer(String stream, byte[] buf, int n) {
    byte[] copy = null;
    lock.lock();
    try {
      if (!closed && bytes + n <= maxBytes) {
        copy = java.util.Arrays.copyOf(buf, n);
        bytes += n;
        long gap = gaps.getOrDefault(stream, 0L);
        gaps.remove(stream);
        chunks.addLast(new Chunk(stream, copy, gap));
        notEmpty.signal();
        return;
      }
    } catch (Throwable e) {
      // no memory for the copy: dropped like a chunk that does not fit
    } finally {
      lock.unlock();
    }
    drop(stream, buf, n);
  }

  private void drop(String stream, byte[] buf, int n) {
    long lines = 0;
    for (int i = 0; i < n; i++) {
      if (buf[i] == '\n') {
        lines++;
      }
    }
    lock.lock();
    try {
      // the lines the dropped bytes end, plus the one a gap's start cuts
      droppedLines.addAndGet(lines + (gaps.containsKey(stream) ? 0 : 1));
      gaps.merge(stream, (long) n, Long::sum);
    } finally {
      lock.unlock();
    }
  }

  /** The stream closed: its last line can be cut and marked complete. */
  void end(String stream) {
    lock.lock();
    try {
      if (!closed) {
        chunks.addLast(new Chunk(stream, null, gaps.getOrDefault(stream, 0L)));
        notEmpty.signal();
      }
    } finally {
      lock.unlock();
    }
  }

  /** The next chunk, waiting up to {@code millis}; null when none came. */
  Chunk poll(long millis) throws InterruptedException {
    lock.lock();
    try {
      long nanos = TimeUnit.MILLISECONDS.toNanos(millis);
      while (chunks.isEmpty() && !closed && nanos > 0) {
        nanos = notEmpty.awaitNanos(nanos);
      }
      Chunk c = chunks.pollFirst();
      if (c != null && c.bytes() != null) {
        bytes -= c.bytes().length;
      }
      return c;
    } finally {
      lock.unlock();
    }
  }

  /** No more offers; what is queued is still handed out. */
  void close() {
    lock.lock();
    try {
      closed = true;
      notEmpty.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /**
   * `run` is leaving: what is still queued will not be shipped. Drops it and counts its lines among
   * {@link #droppedLines()}.
   */
  void abandon() {
    lock.lock();
    try {
      closed = true;
      for (Chunk c; (c = chunks.pollFirst()) != null; ) {
        if (c.bytes() != null) {
          long lines = 0;
          for (byte b : c.bytes()) {
            lines += b == '\n' ? 1 : 0;
          }
          droppedLines.addAndGet(lines);
        }
      }
      bytes = 0;
      notEmpty.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /** True once closed and empty. */
  boolean drained() {
    lock.lock();
    try {
      return closed && chunks.isEmpty();
    } finally {
      lock.unlock();
    }
  }

  /** Lines not shipped because shipping was behind (a line cut by a gap counts once). */
  public long droppedLines() {
    return droppedLines.get();
  }
}
