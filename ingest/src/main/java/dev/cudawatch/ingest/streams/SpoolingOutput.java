package dev.cudawatch.ingest.streams;

import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.ingest.spool.DiskSpool;
import dev.cudawatch.ingest.spool.SpoolForwarder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;

/** Writes records of stream sources to the disk spool; the forwarder ships them from there. */
public final class SpoolingOutput {
  private final DiskSpool spool;
  private final long syncEveryMs;
  private long lastSync = System.nanoTime() / 1_000_000 - 1_000_000; // due at once
  private final AtomicLong written = new AtomicLong();

  public SpoolingOutput(DiskSpool spool, long syncEveryMs) {
    this.spool = spool;
    this.syncEveryMs = syncEveryMs;
  }

  public synchronized void write(LogRecord r) {
    try {
      spool.append(
          SpoolForwarder.encode(
              r.streamKey().getBytes(StandardCharsets.UTF_8), WireJson.toBytes(r)));
      written.incrementAndGet();
      long now = System.nanoTime() / 1_000_000; // an interval: the monotonic clock
      if (now - lastSync >= syncEveryMs) {
        spool.sync();
        lastSync = now;
      }
    } catch (IOException e) {
      throw new UncheckedIOException("spool write failed: " + e.getMessage(), e);
    }
  }

  public synchronized void sync() throws IOException {
    spool.sync();
  }

  public long written() {
    return written.get();
  }
}
