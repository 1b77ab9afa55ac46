package dev.cudawatch.diagnosis.engine;

import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Reads lines ended by {@code \n} only. A bare {@code \r} (a progress bar redrawing itself)
 * restarts the line, so a million progress updates never grow a line; a line longer than the cap
 * keeps its first {@code maxChars} and counts as truncated. Invalid UTF-8 is replaced, not fatal.
 */
public final class LineReader implements AutoCloseable {
  private final Reader in;
  private final int maxChars;
  private final char[] buf = new char[64 * 1024];
  private int pos;
  private int len;
  private final StringBuilder line = new StringBuilder();
  private long truncated;
  private long bytesHint;

  public LineReader(InputStream in, int maxChars) {
    this.in =
        new InputStreamReader(
            in,
            StandardCharsets.UTF_8
                .newDecoder()
                .onMalformedInput(CodingErrorAction.REPLACE)
                .onUnmappableCharacter(CodingErrorAction.REPLACE));
    this.maxChars = maxChars;
  }

  /** The next line without its terminator, or null at the end. */
  public String next() throws IOException {
    line.setLength(0);
    boolean any = false;
    boolean cut = false;
    boolean pendingCr = false;
    while (true) {
      if (pos == len) {
        len = in.read(buf, 0, buf.length);
        pos = 0;
        if (len <= 0) {
          len = 0;
          return any ? finish(cut) : null;
        }
        bytesHint += len;
      }
      any = true;
      char c = buf[pos++];
      if (pendingCr) {
        pendingCr = false;
        if (c == '\n') {
          return finish(cut); // CRLF
        }
        line.setLength(0); // a bare carriage return: the line is redrawn
        cut = false;
      }
      if (c == '\n') {
        return finish(cut);
      } else if (c == '\r') {
        pendingCr = true;
      } else if (line.length() < maxChars) {
        line.append(c);
      } else {
        cut = true;
      }
    }
  }

  private String finish(boolean cut) {
    if (cut) {
      truncated++;
    }
    return line.toString();
  }

  /** Lines cut at the cap so far. */
  public long truncated() {
    return truncated;
  }

  /** Characters read so far (for progress). */
  public long charsRead() {
    return bytesHint;
  }

  @Override
  public void close() throws IOException {
    in.close();
  }
}
