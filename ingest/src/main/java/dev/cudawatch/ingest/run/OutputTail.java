package dev.cudawatch.ingest.run;

import java.util.Arrays;

/**
 * The last {@code capacity} bytes one of the job's streams wrote, kept in memory for the diagnosis
 * of a failed job: a failure's lines are near the end. An offer copies into a fixed ring and never
 * blocks on anything but this ring's lock, never allocates and never throws; what falls out of the
 * window is counted (bytes and lines), so the diagnosis can number its lines as the job's.
 */
public final class OutputTail {
  /** What is kept: whole lines from {@code firstLine} on (1-based in the stream). */
  public record Window(byte[] bytes, long firstLine, long droppedBytes) {}

  private final byte[] ring;
  private long written; // bytes ever offered
  private long lines; // newlines ever offered

  public OutputTail(int capacity) {
    this.ring = new byte[capacity];
  }

  /** Keeps a copy of {@code n} bytes of {@code buf}, the oldest kept ones making way. */
  public synchronized void offer(byte[] buf, int n) {
    int cap = ring.length;
    if (cap == 0 || n <= 0) {
      return;
    }
    for (int i = 0; i < n; i++) {
      if (buf[i] == '\n') {
        lines++;
      }
    }
    int from = n > cap ? n - cap : 0; // only the last `cap` bytes of a large chunk can stay
    long at = written + from;
    for (int i = from; i < n; ) {
      int pos = (int) (at % cap);
      int len = Math.min(n - i, cap - pos);
      System.arraycopy(buf, i, ring, pos, len);
      i += len;
      at += len;
    }
    written += n;
  }

  /** The kept bytes from the first whole line on, with that line's number in the stream. */
  public synchronized Window window() {
    int cap = ring.length;
    int kept = (int) Math.min(written, cap);
    byte[] out = new byte[kept];
    long start = written - kept;
    for (int i = 0; i < kept; ) {
      int pos = (int) ((start + i) % cap);
      int len = Math.min(kept - i, cap - pos);
      System.arraycopy(ring, pos, out, i, len);
      i += len;
    }
    int skip = 0;
    if (start > 0) { // the window starts inside a line: drop that part line
      while (skip < kept && out[skip] != '\n') {
        skip++;
      }
      skip = Math.min(kept, skip + 1);
    }
    byte[] whole = skip == 0 ? out : Arrays.copyOfRange(out, skip, kept);
    long linesKept = 0;
    for (byte b : whole) {
      if (b == '\n') {
        linesKept++;
      }
    }
    return new Window(whole, lines - linesKept + 1, start + skip);
  }
}
