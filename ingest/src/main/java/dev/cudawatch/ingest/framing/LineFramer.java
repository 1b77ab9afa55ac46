package dev.cudawatch.ingest.framing;

import dev.cudawatch.common.text.Ansi;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;

/**
 * Cuts a byte stream into lines ended by {@code \n}. A bare {@code \r} (a progress bar redrawing)
 * discards what came before it on the line, so a tqdm bar never grows a line; ANSI escapes are
 * removed; a line longer than {@code maxBytes} keeps its head and a marker; invalid UTF-8 becomes
 * U+FFFD. Memory is bounded by {@code maxBytes} whatever the input, and a framer holds only what
 * its lines need: the buffer grows to the longest line and shrinks back after it, so thousands of
 * followed files of short lines cost little.
 */
public final class LineFramer {
  /** Appended to a line that was cut at the limit. */
  public static final String TRUNCATED_MARKER = " …[cudawatch: line truncated]";

  private final int maxBytes;
  private static final int SMALL = 256;
  private static final int KEEP = 16 * 1024;

  private byte[] line;
  private final boolean stripAnsi;
  private final boolean redraw;
  private int len;
  private boolean overflow;
  private boolean pendingCr;
  private long lineStart;
  private long pos;

  public LineFramer(int maxBytes, boolean stripAnsi, long startOffset) {
    this(maxBytes, stripAnsi, true, startOffset);
  }

  /**
   * @param redraw apply the bare {@code \r} rule; off for lines that carry a prefix of their own
   *     (CRI container logs), whose decoder applies it to the content after the prefix
   */
  public LineFramer(int maxBytes, boolean stripAnsi, boolean redraw, long startOffset) {
    this.redraw = redraw;
    this.maxBytes = maxBytes;
    this.line = new byte[Math.min(SMALL, maxBytes)];
    this.stripAnsi = stripAnsi;
    this.lineStart = startOffset;
    this.pos = startOffset;
  }

  /** Feeds bytes; each complete line goes to {@code out}. */
  public void feed(byte[] buf, int off, int n, Consumer<FramedLine> out) {
    for (int i = off; i < off + n; i++) {
      byte b = buf[i];
      pos++;
      if (pendingCr) {
        pendingCr = false;
        if (b == '\n') {
          emit(out);
          continue;
        }
        len = 0; // a bare carriage return: the line is redrawn
        overflow = false;
      }
      if (b == '\n') {
        emit(out);
      } else if (b == '\r' && redraw) {
        pendingCr = true;
      } else if (len < maxBytes) {
        if (len == line.length) {
          line = java.util.Arrays.copyOf(line, (int) Math.min(maxBytes, 2L * line.length));
        }
        line[len++] = b;
      } else {
        overflow = true;
      }
    }
  }

  /** Emits a final line without terminator (end of a file that will not grow). */
  public void flush(Consumer<FramedLine> out) {
    if (len > 0 || overflow || pendingCr) {
      pendingCr = false;
      emit(out);
    }
  }

  /** True when bytes of an unfinished line are held. */
  public boolean hasPartial() {
    return len > 0 || pendingCr;
  }

  /** Offset of the first byte not yet part of an emitted line. */
  public long lineStart() {
    return lineStart;
  }

  private void emit(Consumer<FramedLine> out) {
    // String's own UTF-8 decoding replaces what is invalid as a REPLACE decoder does, without the
    // decoder's char buffer and its copy: one array per line instead of three
    String text = new String(line, 0, len, StandardCharsets.UTF_8);
    String raw = null;
    if (stripAnsi && text.indexOf('\u001b') >= 0) {
      raw = text;
      text = Ansi.strip(text);
    }
    if (overflow) {
      text += TRUNCATED_MARKER;
    }
    out.accept(new FramedLine(lineStart, pos, text, overflow, raw));
    len = 0;
    overflow = false;
    lineStart = pos;
    if (line.length > KEEP) {
      line = new byte[SMALL]; // one long line must not pin its buffer for the file's life
    }
  }
}
