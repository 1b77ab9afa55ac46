package dev.cudawatch.ingest.streams;

import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.ingest.attribution.KernelPidJoin;
import dev.cudawatch.ingest.attribution.RunAttribution;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads {@code /dev/kmsg} records ({@code priority,seq,timestamp_us,flags;message}, one per read)
 * and keeps the lines that matter to GPU jobs: NVRM messages (Xid), and the OOM killer. PCI
 * addresses are mapped to GPU indices.
 *
 * <p>Sequence numbers and timestamps start again at every boot, so the boot id is the record's
 * source id (a post-reboot Xid at sequence 5 is not a duplicate of the pre-reboot one), event time
 * is the boot time plus the record's timestamp, and the last sequence taken of this boot is
 * persisted: a restarted agent does not ship the ring buffer again as new incidents.
 *
 * <p>A line that names a process (an Xid's {@code pid=}, the OOM killer's victim) takes that
 * process's job, rank and GPU when a {@link KernelPidJoin} is given.
 */
public final class KernelLogSource implements dev.cudawatch.ingest.lifecycle.StoppableSource {
  private static final Logger LOG = LoggerFactory.getLogger(KernelLogSource.class);
  private static final Pattern RELEVANT =
      Pattern.compile("NVRM|Xid|Out of memory|oom-kill|Killed process|fallen off the bus");
  private static final long CURSOR_EVERY_MS = 1000;
  private static final long IDLE_WAIT_MS = 200;
  private static final long SPOOL_RETRY_MS = 500;

  private final Path device;
  private final BootInfo boot;
  private final KmsgCursor cursor;
  private final String host;
  private final java.util.function.Supplier<Map<String, Integer>> pciToGpu;
  private final Consumer<LogRecord> out;
  private final Clock clock;
  private final KernelPidJoin pidJoin; // null: lines are not joined to their processes
  private final AtomicLong shipped = new AtomicLong();
  private final AtomicLong skipped = new AtomicLong();
  private final AtomicLong spoolRetries = new AtomicLong();
  private volatile boolean running = true;
  private long skipThrough = -1;
  private volatile long lastSeq = -1;
  private long savedSeq = -1;
  private long lastSave = System.nanoTime() / 1_000_000;

  /**
   * @param device {@code /dev/kmsg}, or a file or pipe of records in its format
   * @param boot the boot whose records the device holds
   * @param stateDir where the per-boot cursor is kept
   */
  public KernelLogSource(
      Path device,
      BootInfo boot,
      Path stateDir,
      String host,
      Map<String, Integer> pciToGpu,
      Consumer<LogRecord> out,
      Clock clock)
      throws IOException {
    this(device, boot, stateDir, host, () -> pciToGpu, out, clock);
  }

  /**
   * As above, with a PCI map that may arrive later (nvidia-smi answers off the start path).
   *
   * @param out takes a record or throws when it cannot keep it (the spool cannot be written): the
   *     record is offered again until it is kept, and the cursor never passes it before
   */
  public KernelLogSource(
      Path device,
      BootInfo boot,
      Path stateDir,
      String host,
      java.util.function.Supplier<Map<String, Integer>> pciToGpu,
      Consumer<LogRecord> out,
      Clock clock)
      throws IOException {
    this(device, boot, stateDir, host, pciToGpu, null, out, clock);
  }

  /**
   * As above, joining the lines that name a pid to its process's job, rank and GPU.
   *
   * @param pidJoin the join, or null for none
   */
  public KernelLogSource(
      Path device,
      BootInfo boot,
      Path stateDir,
      String host,
      java.util.function.Supplier<Map<String, Integer>> pciToGpu,
      KernelPidJoin pidJoin,
      Consumer<LogRecord> out,
      Clock clock)
      throws IOException {
    this.device = device;
    this.boot = boot;
    this.cursor = new KmsgCursor(stateDir);
    this.host = host;
    this.pciToGpu = pciToGpu;
    this.out = out;
    this.clock = clock;
    this.pidJoin = pidJoin;
  }

  /** Whether a kernel message is worth shipping. */
  public static boolean relevant(String message) {
    return RELEVANT.matcher(message).find();
  }

  /** The message of a {@code /dev/kmsg} record {@code "pri,seq,usec,flags;message"}. */
  static String message(String kmsgRecord) {
    int semi = kmsgRecord.indexOf(';');
    return semi < 0 ? kmsgRecord : kmsgRecord.substring(semi + 1);
  }

  /** Field {@code i} of the record's prefix (1: sequence, 2: microseconds since boot), or -1. */
  static long field(String kmsgRecord, int i) {
    int semi = kmsgRecord.indexOf(';');
    if (semi < 0) {
      return -1;
    }
    String[] f = kmsgRecord.substring(0, semi).split(",", 5);
    try {
      return f.length > i ? Long.parseLong(f[i].strip()) : -1;
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  @Override
  public void run() {
    skipThrough = cursor.lastSeq(boot.bootId());
    lastSeq = skipThrough;
    savedSeq = skipThrough;
    byte[] buf = new byte[16 * 1024];
    StringBuilder partial = new StringBuilder();
    try (InputStream in = Files.newInputStream(device)) {
      while (running) {
        int n;
        try {
          n = in.read(buf); // /dev/kmsg returns one whole record per read
        } catch (IOException e) {
          if (String.valueOf(e.getMessage()).contains("Broken pipe")) {
            continue; // records were overwritten before we read them (EPIPE): go on
          }
          throw e;
        }
        if (n <= 0) {
          saveCursor(false);
          sleepIdle(); // a file or pipe of records (tests, replays) may still grow
          continue;
        }
        partial.append(new String(buf, 0, n, StandardCharsets.UTF_8));
        int nl;
        while ((nl = partial.indexOf("\n")) >= 0) {
          String rec = partial.substring(0, nl);
          partial.delete(0, nl + 1);
          take(rec);
        }
        saveCursor(false);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(
          "kernel log " + device + " unavailable (needs root or CAP_SYSLOG): " + e.getMessage(), e);
    } finally {
      saveCursor(true);
    }
  }

  private void take(String rec) {
    if (rec.isEmpty() || rec.charAt(0) == ' ') {
      return; // a continuation line (KEY=value dictionary of the record before)
    }
    long seq = field(rec, 1);
    if (seq < 0) {
      return;
    }
    if (seq <= skipThrough) {
      skipped.incrementAndGet(); // taken by an earlier run of the agent in this boot
      return;
    }
    String msg = message(rec).strip();
    if (!relevant(msg)) {
      lastSeq = seq;
      return;
    }
    Instant now = clock.instant();
    long micros = field(rec, 2);
    Instant event =
        boot.bootTime() != null && micros >= 0 ? boot.bootTime().plusNanos(micros * 1000) : now;
    Integer gpu = PciMap.gpuOf(msg, pciToGpu.get());
    LogRecord.Builder b =
        LogRecord.builder().host(host).kind(RecordKind.KERNEL).stream("kmsg")
            .source(device.toString())
            .sourceId(boot.bootId())
            .offset(seq)
            .gpu(gpu)
            .eventTime(event)
            .ingestTime(now)
            .text(msg);
    RunAttribution who = pidJoin == null ? null : pidJoin.join(msg, gpu);
    if (who != null) {
      b.job(who.job())
          .rank(who.rank())
          .localRank(who.localRank())
          .gpu(who.gpu())
          .gpuUuid(who.gpuUuid())
          .attribution(who.attribution());
    }
    LogRecord r = b.build();
    if (!keep(r)) {
      return; // stopped before it was kept: the cursor stays before it, the next start reads it
    }
    shipped.incrementAndGet();
    lastSeq = seq; // only once spooled: a stop now must not skip it next time
  }

  /**
   * Hands the record on, offering it again while that fails (a full disk under the spool): the
   * kernel record cannot be read again once passed, so reading waits for room. False if stopped
   * first.
   */
  private boolean keep(LogRecord r) {
    while (running) {
      try {
        out.accept(r);
        return true;
      } catch (RuntimeException e) {
        if (spoolRetries.getAndIncrement() == 0) {
          LOG.warn("kernel log: cannot spool record {}, retrying: {}", r.offset(), e.getMessage());
        }
        try {
          Thread.sleep(SPOOL_RETRY_MS);
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          running = false;
        }
      }
    }
    return false;
  }

  private synchronized void saveCursor(boolean now) {
    long t = System.nanoTime() / 1_000_000; // an interval: the monotonic clock
    if (lastSeq == savedSeq || (!now && t - lastSave < CURSOR_EVERY_MS)) {
      return;
    }
    try {
      cursor.save(boot.bootId(), lastSeq);
      savedSeq = lastSeq;
      lastSave = t;
    } catch (IOException e) {
      LOG.warn("saving the kernel log cursor: {}", e.toString());
    }
  }

  private void sleepIdle() {
    try {
      Thread.sleep(IDLE_WAIT_MS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      running = false;
    }
  }

  /** Records handed on to the spool. */
  public long shipped() {
    return shipped.get();
  }

  /** Records skipped because an earlier run of the agent took them in this boot. */
  public long skipped() {
    return skipped.get();
  }

  /**
   * Lines that named a pid, by how their join ended ({@link KernelPidJoin.Result}); empty when off.
   */
  public Map<String, Long> pidJoins() {
    return pidJoin == null ? Map.of() : pidJoin.counts();
  }

  /** Attempts to spool a record that failed (a full disk), each retried. */
  public long spoolRetries() {
    return spoolRetries.get();
  }

  /** Times the cursor could not be read (corrupt, newer format): this boot was read again. */
  public long cursorResets() {
    return cursor.resets();
  }

  @Override
  public boolean stopRequested() {
    return !running;
  }

  /** Stops reading and saves how far it got. */
  public void stop() {
    running = false;
    saveCursor(true);
  }
}
