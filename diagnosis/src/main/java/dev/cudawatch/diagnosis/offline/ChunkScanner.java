package dev.cudawatch.diagnosis.offline;

import dev.cudawatch.diagnosis.engine.BigramFilter;
import dev.cudawatch.diagnosis.engine.LineNormalizer;
import dev.cudawatch.diagnosis.engine.LinePrefilter;
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
    return scan(ch, size, start, end, tail, null);
  }

  /**
   * Scans as {@link #scan(FileChannel, long, long, long, int)} does; with {@code bigrams}, only the
   * lines the stateless first pass picks are walked by the automaton.
   */
  Result scan(FileChannel ch, long size, long start, long end, int tail, BigramFilter bigrams)
      throws IOException {
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
    Pass pass = new Pass(ch, size, from, to, b, n);
    if (bigrams != null) {
      Lane only = new Lane();
      only.lineStart = p;
      if (p < own && p < n) {
        pass.filtered(only, p, own, bigrams.table());
      }
      return only.found.result(only.lines);
    }
    // two lanes, each over about half the chunk's lines: the first ends where the second begins
    int mid = p < own ? indexOf(b, p + (own - p) / 2, own) + 1 : own;
    if (mid >= own) {
      Lane only = new Lane();
      only.lineStart = p;
      if (p < own && p < n) {
        pass.alone(only, p, 0, own);
      }
      return only.found.result(only.lines);
    }
    Lane la = new Lane();
    Lane lc = new Lane();
    la.lineStart = p;
    lc.lineStart = mid;
    int[] lanes = {p, 0, mid, 0};
    boolean aLive = true;
    boolean cLive = true;
    while (aLive && cLive) {
      long r = prefilter.scanPair(b, lanes, mid, n);
      if (r == -1) {
        // lane a always ends on the newline before mid, so only lane c runs out: at the bytes' end
        cLive = pass.next(lc, n, 3, lanes, 2, own);
      } else if ((r & 4) == 0) {
        aLive = pass.next(la, (int) (r >>> 3), (int) (r & 3), lanes, 0, mid);
      } else {
        cLive = pass.next(lc, (int) (r >>> 3), (int) (r & 3), lanes, 2, own);
      }
    }
    if (aLive) {
      pass.alone(la, lanes[0], lanes[1], mid);
    }
    if (cLive) {
      pass.alone(lc, lanes[2], lanes[3], own);
    }
    Found found = la.found;
    for (int i = 0; i < lc.found.size; i++) {
      found.add(la.lines + lc.found.index[i], lc.found.text[i], lc.found.next[i]);
    }
    return found.result(la.lines + lc.lines);
  }

  /** One lane's lines: those it found and how many it passed. */
  private static final class Lane {
    final Found found = new Found();
    long lines;
    int lineStart;
  }

  /** One chunk's bytes and what the lanes need to take a line. */
  private final class Pass {
    private final FileChannel ch;
    private final long size;
    private final long from;
    private final long to;
    private final byte[] b;
    private final int n;

    Pass(FileChannel ch, long size, long from, long to, byte[] b, int n) {
      this.ch = ch;
      this.size = size;
      this.from = from;
      this.to = to;
      this.b = b;
      this.n = n;
    }

    /**
     * Scans a lane on its own from {@code p} in {@code state}, in a line it owns (which may run
     * past {@code own}), until its lines run out.
     */
    void alone(Lane lane, int p, int state, int own) throws IOException {
      int[] at = {p, state};
      boolean live = true;
      while (live) {
        long r = prefilter.scan(b, at[0], n, at[1]);
        live = next(lane, (int) (r >>> 2), (int) (r & 3), at, 0, own);
      }
    }

    /**
     * Scans a lane from {@code p} with the pair table first: a line none of whose byte pairs is a
     * candidate is only counted; one with a candidate pair is walked by the automaton from its
     * start, exactly as {@link #alone} would walk it.
     */
    void filtered(Lane lane, int p, int own, byte[] pairs) throws IOException {
      final byte[] b = this.b;
      final int n = this.n;
      int[] at = {p, 0};
      int i = p;
      while (true) {
        // i is at a line's start, so the byte before it is a newline
        i = firstMarked(b, i, n, pairs, '\n');
        int t =
            i < n ? pairs[(i == lane.lineStart ? '\n' : b[i - 1] & 0xff) << 8 | b[i] & 0xff] : 0;
        if (t == BigramFilter.NEWLINE) {
          lane.lines++;
          i++;
          lane.lineStart = i;
          if (i >= own || i >= n) {
            return;
          }
        } else {
          // a candidate pair, or the bytes ran out inside a line: the automaton decides
          if (lane.lineStart >= n) {
            return;
          }
          long r = prefilter.scan(b, lane.lineStart, n, 0);
          if (!next(lane, (int) (r >>> 2), (int) (r & 3), at, 0, own)) {
            return;
          }
          i = lane.lineStart;
        }
      }
    }

    /**
     * Takes the lane's line that an event at {@code at} of {@code kind} ended or flagged, and moves
     * the lane ({@code lanes[slot]} and its state) to the next line's start.
     *
     * @return whether the lane has another line: one starting before {@code own} and the bytes' end
     */
    boolean next(Lane lane, int at, int kind, int[] lanes, int slot, int own) throws IOException {
      int p = lane.lineStart;
      int nextLine;
      if (kind == 0) {
        nextLine = at + 1;
      } else {
        int eol = kind == 3 ? n : indexOf(b, at, n);
        if (eol == n && to < size) {
          // a line longer than the tail: read it alone, as LineReader would, and pass it on
          long nextOffset = lineEnd(ch, size, from + n) + 1;
          String text;
          try (LineReader lr = new LineReader(new Positional(ch, from + p), maxLineBytes)) {
            text = lr.next();
          }
          lane.found.add(lane.lines, text, nextOffset);
          lane.lines++;
          return false; // it ends past this chunk, so it was the chunk's last line
        }
        if (kind == 1) {
          lane.found.add(lane.lines, decode(b, p, eol, maxLineBytes), from + eol + 1);
        } else if (kind == 2) {
          String text = decode(b, p, eol, maxLineBytes);
          if (prefilter.flags(LineNormalizer.normalize(text).text())) {
            lane.found.add(lane.lines, text, from + eol + 1);
          }
        }
        nextLine = eol + 1;
      }
      lane.lines++;
      lane.lineStart = nextLine;
      lanes[slot] = nextLine;
      lanes[slot + 1] = 0;
      return nextLine < own && nextLine < n;
    }
  }

  /**
   * The first index in [{@code i}, {@code n}) whose byte pair (with the byte before it, {@code
   * prev} for the first) is marked in {@code pairs}, or {@code n}. Four pairs a step, or-ed before
   * one branch: classify runs C1-compiled code (bin/cudawatch), which neither unrolls loops nor
   * hoists field loads, so this loop is written the way C2 would have compiled the simple one.
   */
  static int firstMarked(byte[] b, int i, int n, byte[] pairs, int prev) {
    int p = prev;
    while (i + 4 <= n) {
      int c0 = b[i] & 0xff;
      int c1 = b[i + 1] & 0xff;
      int c2 = b[i + 2] & 0xff;
      int c3 = b[i + 3] & 0xff;
      if ((pairs[p << 8 | c0] | pairs[c0 << 8 | c1] | pairs[c1 << 8 | c2] | pairs[c2 << 8 | c3])
          != 0) {
        break;
      }
      p = c3;
      i += 4;
    }
    for (; i < n; i++) {
      int c = b[i] & 0xff;
      if (pairs[p << 8 | c] != 0) {
        return i;
      }
      p = c;
    }
    return n;
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
