package dev.cudawatch.ingest.run;

import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.ingest.ship.Shipper;
import dev.cudawatch.ingest.spool.DiskSpool;
import dev.cudawatch.ingest.spool.SpoolForwarder;
import dev.cudawatch.ingest.streams.SpoolingOutput;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Where a wrapped job's records go: a disk spool first (the job never waits for Kafka), shipped
 * from there when Kafka can be reached. Nothing here may reach the job: a spool that cannot be
 * created or written, a producer that cannot be built, any exception, turns shipping off (or leaves
 * it to the node agent) with one line on stderr, and the lines not shipped are counted.
 */
public final class RunShipping implements AutoCloseable {
  private final PrintStream console;
  private final java.util.Set<String> reported = java.util.concurrent.ConcurrentHashMap.newKeySet();
  private final AtomicLong notShipped = new AtomicLong();
  private final AtomicLong spooled = new AtomicLong();
  private volatile String failure;
  private DiskSpool spool;
  private SpoolingOutput out;
  private Shipper shipper;
  private SpoolForwarder forwarder;
  private Path spoolDir;

  private RunShipping(PrintStream console) {
    this.console = console;
  }

  /** Opens the spool and, if Kafka's client can be built, the forwarder; never throws. */
  public static RunShipping open(
      Path spoolRoot,
      String runId,
      long maxBytes,
      long segmentBytes,
      KafkaSettings kafka,
      PrintStream console) {
    RunShipping s = new RunShipping(console);
    try {
      s.spoolDir = RunSpools.runDir(spoolRoot, runId);
      s.spool = new DiskSpool(s.spoolDir, maxBytes, segmentBytes);
      s.out = new SpoolingOutput(s.spool, 100);
    } catch (Exception | LinkageError e) {
      s.fail("cannot create a spool under " + spoolRoot + " (" + oneLine(e) + ")");
      s.spoolDir = null;
      return s;
    }
    try {
      s.shipper = new Shipper(kafka);
      s.forwarder = new SpoolForwarder(s.spool, s.shipper, 20_000);
      Thread t = new Thread(s.forwarder, "cudawatch-run-ship");
      t.setDaemon(true);
      t.start();
    } catch (Exception | LinkageError e) {
      // Kafka's client could not be built (an unresolvable host, a bad property): the spool
      // stays for the node agent, which ships it once it can
      s.report(
          "kafka", "Kafka unavailable (" + oneLine(e) + "); output is spooled for the node agent");
      s.shipper = null;
      s.forwarder = null;
    }
    return s;
  }

  /** Spools one record; on any failure shipping stops for the rest of the run. */
  public void write(LogRecord r) {
    // a quiet marker lost costs only time (the processor's flush timer): it is no line not shipped
    boolean line = r.kind() != dev.cudawatch.common.wire.RecordKind.QUIET;
    if (out == null) {
      if (line) {
        notShipped.incrementAndGet();
      }
      return;
    }
    try {
      out.write(r);
      spooled.incrementAndGet();
    } catch (Exception | LinkageError e) {
      if (line) {
        notShipped.incrementAndGet();
      }
      // a spool that failed once (a full disk) may hold a cut record: write no more after it
      fail("cannot write the spool (" + oneLine(e) + ")");
    }
  }

  /**
   * Makes the spool durable and waits up to {@code seconds} for Kafka to acknowledge it. True when
   * everything was shipped, so the spool can go.
   */
  public boolean drain(int seconds) {
    if (out == null) {
      return false;
    }
    try {
      out.sync();
      if (forwarder == null) {
        return false;
      }
      long deadline = System.nanoTime() + seconds * 1_000_000_000L; // a wait: monotonic
      while ((spool.hasUnread() || forwarder.inFlight() > 0) && System.nanoTime() < deadline) {
        Thread.sleep(50);
      }
      return !spool.hasUnread() && forwarder.inFlight() == 0;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } catch (Exception e) {
      fail("cannot finish shipping (" + oneLine(e) + ")");
      return false;
    }
  }

  /** This run's spool directory, or null when none could be made. */
  public Path spoolDir() {
    return spoolDir;
  }

  /** True while records are still being spooled. */
  public boolean spooling() {
    return out != null;
  }

  public long spooled() {
    return spooled.get();
  }

  /** Lines of the job that will not be shipped (spool failures, shipping off). */
  public long notShipped() {
    return notShipped.get();
  }

  /** Why shipping stopped, or null. */
  public String failure() {
    return failure;
  }

  private synchronized void fail(String why) {
    if (out != null || failure == null) {
      failure = why;
      out = null;
      report("spool", why + "; the job's output still passes through unchanged");
    }
  }

  /** One line on stderr per kind of failure, however often it happens. */
  private void report(String kind, String line) {
    if (reported.add(kind)) {
      console.println("cudawatch run: " + line);
    }
  }

  private static String oneLine(Throwable e) {
    if (e instanceof java.io.UncheckedIOException && e.getCause() != null) {
      e = e.getCause(); // the file system's own words: "No space left on device"
    }
    String m = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    int nl = m.indexOf('\n');
    return nl < 0 ? m : m.substring(0, nl);
  }

  @Override
  public void close() {
    for (AutoCloseable c : new AutoCloseable[] {forwarder, shipper, spool}) {
      if (c != null) {
        try {
          c.close();
        } catch (Exception e) {
          // closing after the job ended: nothing left to protect, nothing to report twice
        }
      }
    }
  }
}
