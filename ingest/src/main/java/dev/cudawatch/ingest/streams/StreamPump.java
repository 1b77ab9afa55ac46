package dev.cudawatch.ingest.streams;

import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.ingest.framing.FramedLine;
import dev.cudawatch.ingest.framing.LineFramer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongFunction;

/**
 * Reads a byte stream (a pipe, stdin, a device), passes it through unchanged when asked, and turns
 * its lines into records.
 */
public final class StreamPump implements Runnable {
  private final InputStream in;
  private final OutputStream passThrough;
  private final LineFramer framer;
  private final Function<FramedLine, LogRecord> toRecord;
  private final Consumer<LogRecord> out;
  private final LongFunction<LogRecord> atEnd;
  private long end = -1;

  public StreamPump(
      InputStream in,
      OutputStream passThrough,
      int maxLineBytes,
      Function<FramedLine, LogRecord> toRecord,
      Consumer<LogRecord> out) {
    this(in, passThrough, maxLineBytes, toRecord, null, out);
  }

  /**
   * @param atEnd once the stream closes after lines, the record that says so (a {@code QUIET}
   *     marker at the end of the last line: the job wrote all it will), or null for none
   */
  public StreamPump(
      InputStream in,
      OutputStream passThrough,
      int maxLineBytes,
      Function<FramedLine, LogRecord> toRecord,
      LongFunction<LogRecord> atEnd,
      Consumer<LogRecord> out) {
    this.in = in;
    this.passThrough = passThrough;
    this.framer = new LineFramer(maxLineBytes, true, 0);
    this.toRecord = toRecord;
    this.atEnd = atEnd;
    this.out = out;
  }

  @Override
  public void run() {
    byte[] buf = new byte[8192];
    Consumer<FramedLine> sink =
        l -> {
          end = l.end();
          LogRecord r = toRecord.apply(l);
          if (r != null) {
            out.accept(r);
          }
        };
    try {
      for (int n; (n = in.read(buf)) > 0; ) {
        if (passThrough != null) {
          passThrough.write(buf, 0, n); // unchanged, before anything else
          passThrough.flush();
        }
        framer.feed(buf, 0, n, sink);
      }
    } catch (IOException e) {
      // the writer closed its end
    }
    framer.flush(sink);
    if (atEnd != null && end >= 0) {
      out.accept(atEnd.apply(end));
    }
  }
}
