package dev.cudawatch.ingest.framing;

import dev.cudawatch.common.text.Ansi;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * Turns the lines of a container log written by a CRI runtime (containerd, CRI-O) into the lines
 * the container printed. Each line on disk is {@code <RFC3339Nano time> <stdout|stderr> <P|F>
 * <content>} (the kubelet's CRI logging format); {@code P} marks a fragment of a long line that the
 * runtime split, joined with the following fragments up to the {@code F} one.
 *
 * <p>The framer must run with its redraw rule off ({@link LineFramer#LineFramer(int, boolean,
 * boolean, long)}): a bare {@code \r} here redraws the content after the prefix, never the prefix.
 * A joined line spans from its first fragment's start to its {@code F} line's end, so its
 * acknowledgement moves the file's position past the whole group and a group still open at a
 * restart is read again from its first fragment. A joined line is bounded by {@code maxBytes} and
 * cut with {@link LineFramer#TRUNCATED_MARKER}. A line not in this format passes through with only
 * the framer's usual cleaning, and is counted.
 */
public final class CriLineDecoder {
  private final int maxBytes;
  private final boolean stripAnsi;
  private final AtomicLong malformed;

  private final StringBuilder content = new StringBuilder();
  private int bytes;
  private boolean overflow;
  private boolean pendingCr;
  private long groupStart = -1;
  private long groupEnd;
  private String stream;
  private Instant time;

  /**
   * @param malformed counts lines not in the CRI format (shared by the files of one tailer)
   */
  public CriLineDecoder(int maxBytes, boolean stripAnsi, AtomicLong malformed) {
    this.maxBytes = maxBytes;
    this.stripAnsi = stripAnsi;
    this.malformed = malformed;
  }

  /** A parsed CRI line: null fields mean it was not one. */
  private record Parsed(Instant time, String stream, boolean partial, String content) {}

  /** Decodes one framed line; each complete content line goes to {@code out}. */
  public void accept(FramedLine line, Consumer<FramedLine> out) {
    String text = line.text();
    if (line.truncated() && text.endsWith(LineFramer.TRUNCATED_MARKER)) {
      text = text.substring(0, text.length() - LineFramer.TRUNCATED_MARKER.length());
    }
    Parsed p = parse(text);
    if (p == null) {
      malformed.incrementAndGet();
      flush(out); // an open group ends here: what it has is all there is
      start(line.start(), null, null);
      append(text);
      overflow |= line.truncated();
      groupEnd = line.end();
      emit(out);
      return;
    }
    if (groupStart >= 0 && !p.stream().equals(stream)) {
      flush(out); // the other stream interleaved: the open group will not be continued
    }
    if (groupStart < 0) {
      start(line.start(), p.stream(), p.time());
    }
    append(p.content());
    overflow |= line.truncated();
    groupEnd = line.end();
    if (!p.partial()) {
      emit(out);
    }
  }

  /** Emits an open group as it is (the file will not grow any more). */
  public void flush(Consumer<FramedLine> out) {
    if (groupStart >= 0) {
      emit(out);
    }
  }

  /** True while fragments of a line wait for their {@code F} line. */
  public boolean hasPending() {
    return groupStart >= 0;
  }

  /** Parses {@code <time> <stream> <tag> <content>}; the tag may carry more after a colon. */
  private static Parsed parse(String t) {
    int s1 = t.indexOf(' ');
    if (s1 <= 0) {
      return null;
    }
    int s2 = t.indexOf(' ', s1 + 1);
    if (s2 < 0) {
      return null;
    }
    String stream = t.substring(s1 + 1, s2);
    if (!stream.equals("stdout") && !stream.equals("stderr")) {
      return null;
    }
    int s3 = t.indexOf(' ', s2 + 1);
    String tag = s3 < 0 ? t.substring(s2 + 1) : t.substring(s2 + 1, s3);
    int colon = tag.indexOf(':');
    String kind = colon < 0 ? tag : tag.substring(0, colon);
    if (!kind.equals("P") && !kind.equals("F")) {
      return null;
    }
    Instant time;
    try {
      time =
          OffsetDateTime.parse(t.substring(0, s1), DateTimeFormatter.ISO_OFFSET_DATE_TIME)
              .toInstant();
    } catch (DateTimeParseException e) {
      return null;
    }
    return new Parsed(time, stream, kind.equals("P"), s3 < 0 ? "" : t.substring(s3 + 1));
  }

  private void start(long at, String s, Instant t) {
    groupStart = at;
    stream = s;
    time = t;
    content.setLength(0);
    bytes = 0;
    overflow = false;
    pendingCr = false;
  }

  /** Appends content, applying the framer's rules: a bare CR redraws, the size is bounded. */
  private void append(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (pendingCr) {
        pendingCr = false;
        content.setLength(0); // a bare carriage return: the line is redrawn
        bytes = 0;
        overflow = false;
      }
      if (c == '\r') {
        pendingCr = true; // at the very end of the line it is a CRLF's, and dropped
        continue;
      }
      int n = c < 0x80 ? 1 : c < 0x800 || Character.isSurrogate(c) ? 2 : 3;
      if (bytes + n <= maxBytes) {
        content.append(c);
        bytes += n;
      } else {
        overflow = true;
      }
    }
  }

  private void emit(Consumer<FramedLine> out) {
    String text = content.toString();
    String raw = null;
    if (stripAnsi && text.indexOf('\u001b') >= 0) {
      raw = text;
      text = Ansi.strip(text);
    }
    if (overflow) {
      text += LineFramer.TRUNCATED_MARKER;
    }
    FramedLine l = new FramedLine(groupStart, groupEnd, text, overflow, raw, stream, time);
    groupStart = -1;
    content.setLength(0);
    if (content.capacity() > 16 * 1024) {
      content.trimToSize(); // one long line must not pin its buffer for the file's life
    }
    out.accept(l);
  }
}
