package dev.cudawatch.diagnosis.offline;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/**
 * Reads lines ended by {@code \n} only, scanning bytes and decoding each line once. A bare {@code
 * \r} (a progress bar redrawing itself) restarts the line, so a million progress updates never grow
 * a line; a line longer than the cap keeps its first {@code maxBytes} and counts as truncated.
 * Invalid UTF-8 becomes U+FFFD, never an error.
 */
public final class LineReader implements AutoCloseable {
  private final InputStream in;
  private final int maxBytes;
  private final byte[] buf = new byte[1 << 20];
  private int pos;
  private int len;
  private final byte[] carry;
  private int carryLen;
  private boolean carryEndsWithCr;
  private boolean cut;
  private long truncated;
  private long bytesRead;

  public LineReader(InputStream in, int maxBytes) {
    this.in = in;
    this.maxBytes = maxBytes;
    this.carry = new byte[maxBytes];
  }

  /** The next line without its terminator, or null at the end. */
  public String next() throws IOException {
    carryLen = 0;
    carryEndsWithCr = false;
    cut = false;
    boolean any = false;
    while (true) {
      if (pos == len && !fill()) {
        return any ? finish() : null;
      }
      any = true;
      int lastCr = -1;
      int i = pos;
      final byte[] b = buf;
      final int n = len;
      while (i < n) {
        byte c = b[i];
        if (c == '\n') {
          break;
        }
        if (c == '\r') {
          lastCr = i;
        }
        i++;
      }
      if (i < n && carryLen == 0 && !carryEndsWithCr && lastCr < 0 && i - pos <= maxBytes) {
        String s = new String(b, pos, i - pos, StandardCharsets.UTF_8); // the common case: one copy
        pos = i + 1;
        return s;
      }
      append(pos, i, lastCr);
      if (i < n) {
        pos = i + 1;
        return finish();
      }
      pos = n;
    }
  }

  /** Adds bytes [from, to) of the buffer to the line, applying carriage returns and the cap. */
  private void append(int from, int to, int lastCr) {
    if (from < to && carryEndsWithCr) {
      carryLen = 0; // the CR that ended the last chunk was not followed by \n: a redraw
      cut = false;
    }
    carryEndsWithCr = false;
    if (lastCr >= from) {
      if (lastCr == to - 1) {
        carryEndsWithCr = true; // may be CRLF split by the buffer: decide on the next byte
        int prev = -1;
        for (int k = to - 2; k >= from; k--) {
          if (buf[k] == '\r') {
            prev = k;
            break;
          }
        }
        if (prev >= 0) {
          carryLen = 0;
          cut = false;
          from = prev + 1;
        }
        to = to - 1;
      } else {
        carryLen = 0;
        cut = false;
        from = lastCr + 1;
      }
    }
    int room = maxBytes - carryLen;
    int n = to - from;
    if (n > room) {
      cut = true;
      n = Math.max(room, 0);
    }
    System.arraycopy(buf, from, carry, carryLen, n);
    carryLen += n;
  }

  private String finish() {
    if (cut) {
      truncated++;
    }
    return new String(carry, 0, carryLen, StandardCharsets.UTF_8);
  }

  private boolean fill() throws IOException {
    int r = in.read(buf, 0, buf.length);
    if (r <= 0) {
      pos = len = 0;
      return false;
    }
    pos = 0;
    len = r;
    bytesRead += r;
    return true;
  }

  /** Lines cut at the cap so far. */
  public long truncated() {
    return truncated;
  }

  /** Bytes read so far (for progress). */
  public long charsRead() {
    return bytesRead;
  }

  @Override
  public void close() throws IOException {
    in.close();
  }
}
