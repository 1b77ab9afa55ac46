package dev.cudawatch.ingest.run;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

/**
 * Copies one of the job's output pipes to where it would have gone without `run`, and only then
 * hands a copy of the bytes to shipping through a {@link RunOutputQueue} that never blocks. The
 * copy loop allocates nothing and calls nothing of shipping that can wait or fail: framing,
 * records, the spool and Kafka all run on the shipping thread.
 */
public final class RunOutputPump implements Runnable {
  private final InputStream in;
  private final OutputStream passThrough;
  private final String stream;
  private final RunOutputQueue queue;
  private final OutputTail tail;

  public RunOutputPump(
      InputStream in, OutputStream passThrough, String stream, RunOutputQueue queue) {
    this(in, passThrough, stream, queue, null);
  }

  /**
   * @param tail keeps the stream's last bytes for the diagnosis of a failed job, or null
   */
  public RunOutputPump(
      InputStream in,
      OutputStream passThrough,
      String stream,
      RunOutputQueue queue,
      OutputTail tail) {
    this.in = in;
    this.passThrough = passThrough;
    this.stream = stream;
    this.queue = queue;
    this.tail = tail;
  }

  @Override
  public void run() {
    byte[] buf = new byte[8192];
    try {
      for (int n; (n = in.read(buf)) > 0; ) {
        try {
          passThrough.write(buf, 0, n); // unchanged, before anything else
          passThrough.flush();
        } catch (IOException e) {
          // where the output went is gone (a closed terminal): keep reading, or the job would
          // block on a full pipe
        }
        queue.offer(stream, buf, n);
        if (tail != null) {
          tail.offer(buf, n); // a copy into a fixed ring: after the job's bytes have passed
        }
      }
    } catch (IOException e) {
      // the job closed its end (or `run` is leaving)
    }
    queue.end(stream);
  }
}
