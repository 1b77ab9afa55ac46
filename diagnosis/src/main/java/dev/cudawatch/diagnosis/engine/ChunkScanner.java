package dev.cudawatch.diagnosis.engine;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Reads one chunk of a file and finds the lines in it that the stream's classifier must see (see
 * {@link LinePrefilter}); every other line is only counted. A chunk owns the lines that start in
 * its byte range, so chunks split on line boundaries whatever their sizes. Lines are cut exactly as
 * {@link LineReader} cuts them. Runs on any thread; one instance per thread (it reuses a buffer).
 */
final class ChunkScanner {
  /** What one chunk holds. */
  record Result(long lines, int found, long[] index, String[] text, long[] next) {
    /** Line {@code i} of the found ones: its 0-based number in the chunk. */
    long indexOf(int i) {
      return index[i];
    }
  }

  private final LinePrefilter prefilter;
  private final int maxLineBytes;
  private byte[] buf = new byte[0];

  ChunkScanner(LinePrefilter prefilter, int maxLineBytes) {
    this.prefilter = prefilter;
    this.maxLineBytes = maxLineBytes;
  }

  /**
   * Scans the lines that start in [{@code start}, {@code end}) of the file.
   *
   * @param tail bytes read past {@code end} to finish the chunk's last line; a longer line is read
   *     on its own
   */
  Result scan(FileChannel ch, long size, long start, long end, int tail) throws IOException {
    long from = Math.max(0, start - 1);
    long to = Math.min(size, end + tail);
    int n = (int) (to - from);
    if (buf.length < n) {
      buf = new byte[n];
    }
    readFully(ch, ByteBuffer.wrap(buf, 0, n), from);
    byte[] b = buf;
    int p = 0;
    if (start > 0) {
      // the line that starts before this chunk belongs to the chunk before
      while (p < n && b[p] != '\n') {
        p++;
      }
      p++;
    }
    int own = (int) (end - from); // lines starting at or after this offset belong to the next chunk
    Found found = new Found();
    long lines = 0;
    while (p < own && p < n) {
      long r = prefilter.scan(b, p, n);
      int at = (int) (r >>> 2);
      int kind = (int) (r & 3);
      if (kind == 0) {
        lines++;
        p = at + 1;
        continue;
      }
      int eol = kind == 3 ? n : indexOf(b, at, n);
      if (eol == n && to < size) {
        // a line longer than the tail: read it alone, as LineReader would, and pass it on
        long next = lineEnd(ch, size, from + n) + 1;
        String text;
        try (LineReader lr = new LineReader(new Positional(ch, from + p), maxLineBytes)) {
          text = lr.next();
        }
        found.add(lines, text, next);
        lines++;
        break; // it ends past this chunk, so it was the chunk's last line
      }
      if (kind == 1) {
        found.add(lines, decode(b, p, eol, maxLineBytes), from + eol + 1);
      } else if (kind == 2) {
        String text = decode(b, p, eol, maxLineBytes);
        if (prefilter.flags(LineNormalizer.normalize(text).text())) {
          found.add(lines, text, from + eol + 1);
        }
      }
      lines++;
      p = eol + 1;
    }
    return found.result(lines);
  }

  private static int indexOf(byte[] b, int from, int to) {
    for (int i = from; i < to; i++) {
      if (b[i] == '\n') {
        return i;
      }
    }
    return to;
  }

  /** The offset of the first newline at or after {@code pos}, or {@code size}. */
  private static long lineEnd(FileChannel ch, long size, long pos) throws IOException {
    ByteBuffer bb = ByteBuffer.allocate(1 << 16);
    while (pos < size) {
      bb.clear();
      int r = ch.read(bb, pos);
      if (r <= 0) {
        return size;
      }
      for (int i = 0; i < r; i++) {
        if (bb.get(i) == '\n') {
          return pos + i;
        }
      }
      pos += r;
    }
    return size;
  }

  /**
   * One line's text as {@link LineReader} makes it: a trailing CR dropped, only what follows the
   * last other CR (a progress bar's last state), at most {@code maxBytes} bytes, decoded as UTF-8.
   */
  static String decode(byte[] b, int from, int to, int maxBytes) {
    if (to > from && b[to - 1] == '\r') {
      to--;
    }
    for (int i = to - 1; i >= from; i--) {
      if (b[i] == '\r') {
        from = i + 1;
        break;
      }
    }
    return new String(b, from, Math.min(to - from, maxBytes), StandardCharsets.UTF_8);
  }

  static void readFully(FileChannel ch, ByteBuffer bb, long pos) throws IOException {
    while (bb.hasRemaining()) {
      int r = ch.read(bb, pos);
      if (r < 0) {
        throw new IOException("file shrank while read");
      }
      pos += r;
    }
  }

  /** The found lines of one chunk, grown as needed. */
  private static final class Found {
    private int size;
    private long[] index = new long[16];
    private String[] text = new String[16];
    private long[] next = new long[16];

    void add(long line, String t, long nextOffset) {
      if (size == index.length) {
        index = Arrays.copyOf(index, size * 2);
        text = Arrays.copyOf(text, size * 2);
        next = Arrays.copyOf(next, size * 2);
      }
      index[size] = line;
      text[size] = t;
      next[size] = nextOffset;
      size++;
    }

    Result result(long lines) {
      return new Result(lines, size, index, text, next);
    }
  }

  /** A file read from an offset with positional reads, so threads can share the channel. */
  static final class Positional extends InputStream {
    private final FileChannel ch;
    private long pos;

    Positional(FileChannel ch, long pos) {
      this.ch = ch;
      this.pos = pos;
    }

    @Override
    public int read() throws IOException {
      byte[] one = new byte[1];
      return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      int r = ch.read(ByteBuffer.wrap(b, off, len), pos);
      if (r > 0) {
        pos += r;
      }
      return r;
    }

    @Override
    public void close() {
      // the channel belongs to the caller
    }
  }
}
