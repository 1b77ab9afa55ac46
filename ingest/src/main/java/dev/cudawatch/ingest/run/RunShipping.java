package dev.cudawatch.ingest.run;

import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.ingest.ship.Shipper;
import dev.cudawatch.ingest.spool.DiskSpool;
import dev.cudawatch.ingest.spool.SpoolForwarder;
import dev.cudawatch.ingest.streams.SpoolingOutput;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Where a wrapped job's records go: a disk spool first (the job never waits for Kafka), shipped
 * from there when Kafka can be reached. Nothing here may reach the job: a spool that cannot be
 * created or written, a producer that cannot be built, any exception, turns shipping off (or leaves
 * it to the node agent) with one line on stderr, and the lines not shipped are counted.
 */
public final class RunShipping {
  private final RunNotices notices;
  private final AtomicLong notShipped = new AtomicLong();
  private final AtomicLong spooled = new AtomicLong();
  private volatile String failure;
  private DiskSpool spool;
  private SpoolingOutput out;
  private volatile Shipper shipper;
  private volatile SpoolForwarder forwarder;
  private volatile boolean stopped;
  private Path spoolDir;

  private RunShipping(RunNotices notices) {
    this.notices = notices;
  }

  /** Opens the spool and, if Kafka's client can be built, the forwarder; never throws. */
  public static RunShipping open(
      Path spoolRoot,
      String runId,
      long maxBytes,
      long segmentBytes,
      KafkaSettings kafka,
      RunNotices notices) {
    RunShipping s = new RunShipping(notices);
    try {
      s.spoolDir = RunSpools.runDir(spoolRoot, runId);
      s.spool = new DiskSpool(s.spoolDir, maxBytes, segmentBytes);
      s.out = new SpoolingOutput(s.spool, 100);
    } catch (Exception | LinkageError e) {
      s.fail("cannot create a spool under " + spoolRoot + " (" + oneLine(e) + ")");
      s.spoolDir = null;
      return s;
    }
    // Kafka's client resolves the brokers' names as it is built, which can take seconds (a DNS
    // outage): built on the forwarding thread, so the spool takes records meanwhile
    Thread t = new Thread(() -> s.forward(kafka), "cudawatch-run-ship-kafka");
    t.setDaemon(true);
    t.start();
    return s;
  }

  private void forward(KafkaSettings kafka) {
    try {
      Shipper sh = new Shipper(kafka);
      SpoolForwarder f = new SpoolForwarder(spool, sh, 20_000);
      synchronized (this) {
        if (stopped) {
          sh.close(java.time.Duration.ZERO);
          return;
        }
        shipper = sh;
        forwarder = f;
      }
      f.run();
    } catch (Exception | LinkageError e) {
      // Kafka's client could not be built (an unresolvable host, a bad property): the spool
      // stays for the node agent, which ships it once it can
      notices.degraded(
          "Kafka unavailable (" + oneLine(e) + "); output is spooled for the node agent");
    }
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
   * Makes the spool durable, waits until {@code deadlineNanos} (of {@link System#nanoTime()}) for
   * Kafka to acknowledge it, then stops forwarding without waiting for Kafka any longer; a spool
   * fully shipped is removed. True when everything was shipped. Returns by the deadline whatever
   * the broker does: what was not acknowledged stays spooled for the node agent.
   */
  public boolean finish(long deadlineNanos) throws InterruptedException {
    if (out == null) {
      return false;
    }
    try {
      out.sync();
    } catch (Exception | LinkageError e) {
      fail("cannot write the spool (" + oneLine(e) + ")");
      return false;
    }
    boolean shipped = false;
    try {
      while (!(shipped = forwarder != null && !spool.hasUnread() && forwarder.inFlight() == 0)
          && System.nanoTime() < deadlineNanos) {
        Thread.sleep(20);
      }
    } catch (RuntimeException e) {
      shipped = false;
    }
    stop();
    try {
      spool.close(); // releases its lock: the node agent adopts only spools no run holds
      if (shipped) {
        deleteTree(spoolDir);
      }
    } catch (IOException | RuntimeException e) {
      // shipped already, or left for the agent, which reads a spool's cursor as it was saved
    }
    return shipped;
  }

  /** Stops forwarding at once (the process is about to leave); Kafka's client is abandoned. */
  public void stop() {
    SpoolForwarder f;
    synchronized (this) {
      stopped = true;
      f = forwarder;
    }
    if (f != null) {
      f.stop(java.time.Duration.ofMillis(100));
    }
    Shipper sh = shipper;
    if (sh != null) {
      // closing waits for the network thread; on a daemon thread, so leaving never waits for it
      Thread t = new Thread(() -> sh.close(java.time.Duration.ZERO), "cudawatch-run-close");
      t.setDaemon(true);
      t.start();
    }
  }

  static void deleteTree(Path dir) throws IOException {
    try (java.util.stream.Stream<Path> w = java.nio.file.Files.walk(dir)) {
      for (Path f : w.sorted(java.util.Comparator.reverseOrder()).toList()) {
        java.nio.file.Files.deleteIfExists(f);
      }
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
      notices.degraded(why + "; the job's output still passes through unchanged");
    }
  }

  static String oneLine(Throwable e) {
    if (e instanceof java.io.UncheckedIOException && e.getCause() != null) {
      e = e.getCause(); // the file system's own words: "No space left on device"
    }
    String m = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    int nl = m.indexOf('\n');
    return nl < 0 ? m : m.substring(0, nl);
  }
}
