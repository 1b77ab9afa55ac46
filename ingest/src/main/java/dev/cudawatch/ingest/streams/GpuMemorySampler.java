package dev.cudawatch.ingest.streams;

import dev.cudawatch.common.gpu.GpuMemoryQuery;
import dev.cudawatch.common.gpu.MemorySample;
import dev.cudawatch.common.gpu.NvidiaSmiCsv;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.ingest.proc.ExternalCommand;
import java.io.IOException;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Samples GPU memory with {@code nvidia-smi --query-gpu=... -lms N}. Without nvidia-smi it warns
 * once and tries again now and then; the agent keeps running either way.
 *
 * <p>A wedged GPU makes nvidia-smi hang: a run that prints no row for {@link #rowDeadlineMs} is
 * killed with what it started, counted as a timeout ({@link NvidiaSmiHealth}), and started again
 * only after a pause and only once the killed one is gone, so hung processes never pile up.
 *
 * <p>nvidia-smi prints the node's local time with no zone; each row is shipped with its time
 * converted to UTC, offset written out ({@link NvidiaSmiCsv#toAgentRow}), and as the record's event
 * time, so nothing downstream has to know the node's zone.
 */
public final class GpuMemorySampler implements dev.cudawatch.ingest.lifecycle.StoppableSource {
  private static final Logger LOG = LoggerFactory.getLogger(GpuMemorySampler.class);
  private static final long MIN_ROW_DEADLINE_MS = 10_000;
  private static final long TIMEOUT_PAUSE_MS = 60_000;

  private final String nvidiaSmi;
  private final long intervalMs;
  private final String host;
  private final Consumer<LogRecord> out;
  private final Clock clock;
  private final NvidiaSmiCsv rows;
  private final AtomicLong samples = new AtomicLong();
  // the latest sample of each GPU, for the agent's gauges (one entry per device of the node)
  private final java.util.Map<Integer, MemorySample> latest =
      new java.util.concurrent.ConcurrentHashMap<>();
  private volatile boolean running = true;
  private volatile Process process;
  private volatile boolean warned;
  private final NvidiaSmiHealth health;
  private volatile long lastRowNanos;

  /**
   * @param zone the node's time zone, in which nvidia-smi prints its timestamps
   */
  public GpuMemorySampler(
      String nvidiaSmi,
      long intervalMs,
      String host,
      Consumer<LogRecord> out,
      Clock clock,
      ZoneId zone) {
    this(nvidiaSmi, intervalMs, host, out, clock, zone, new NvidiaSmiHealth());
  }

  /**
   * @param health where timeouts are counted (shared with the agent's other nvidia-smi calls)
   */
  public GpuMemorySampler(
      String nvidiaSmi,
      long intervalMs,
      String host,
      Consumer<LogRecord> out,
      Clock clock,
      ZoneId zone,
      NvidiaSmiHealth health) {
    this.health = health;
    this.rows = NvidiaSmiCsv.agentFormat(zone);
    this.nvidiaSmi = nvidiaSmi;
    this.intervalMs = intervalMs;
    this.host = host;
    this.out = out;
    this.clock = clock;
  }

  /** The command line the sampler runs. */
  public List<String> command() {
    return List.of(
        nvidiaSmi,
        "--query-gpu=" + GpuMemoryQuery.QUERY,
        "--format=csv,noheader,nounits",
        "-lms",
        String.valueOf(intervalMs));
  }

  @Override
  public void run() {
    long offset = 0;
    String runId = Long.toString(clock.millis(), 36);
    while (running) {
      try {
        process =
            new ProcessBuilder(command())
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                .start();
        var killed = new java.util.concurrent.atomic.AtomicBoolean();
        var done = new java.util.concurrent.atomic.AtomicBoolean();
        watch(process, killed, done);
        long[] off = {offset};
        new StreamPump(
                process.getInputStream(),
                null,
                4096,
                l -> {
                  Optional<MemorySample> sample = rows.parse(l.text());
                  if (sample.isEmpty()) {
                    return null; // not a sample (an error message of nvidia-smi)
                  }
                  samples.incrementAndGet();
                  lastRowNanos = System.nanoTime();
                  health.answered();
                  latest.put(sample.get().gpu(), sample.get());
                  return LogRecord.builder().host(host).kind(RecordKind.GPU_MEMORY).stream(
                          "nvidia-smi")
                      .source("nvidia-smi")
                      .sourceId(runId)
                      .offset(off[0]++)
                      .eventTime(Instant.ofEpochMilli(sample.get().epochMillis()))
                      .ingestTime(clock.instant())
                      .text(NvidiaSmiCsv.toAgentRow(sample.get()))
                      .build();
                },
                out)
            .run();
        done.set(true);
        offset = off[0];
        process.waitFor(); // the one run at a time: the next starts once this one is gone
        if (killed.get()) {
          pause(TIMEOUT_PAUSE_MS);
          continue;
        }
      } catch (IOException e) {
        if (!warned) {
          LOG.warn(
              "GPU memory sampling is off: cannot run {} ({}); the agent goes on without it",
              nvidiaSmi,
              e.getMessage());
          warned = true;
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
      try {
        Thread.sleep(warned ? 300_000 : 5_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  /** Milliseconds nvidia-smi may print no row before it counts as hung. */
  long rowDeadlineMs() {
    return Math.max(MIN_ROW_DEADLINE_MS, 3 * intervalMs);
  }

  /**
   * Kills {@code p} with what it started once it prints no row for {@link #rowDeadlineMs}: a hung
   * nvidia-smi. One watchdog per run, ending with it.
   */
  private void watch(
      Process p,
      java.util.concurrent.atomic.AtomicBoolean killed,
      java.util.concurrent.atomic.AtomicBoolean done) {
    lastRowNanos = System.nanoTime();
    Thread dog =
        new Thread(
            () -> {
              // until its output ends: a child it left behind may hold the pipe after it exits
              while (!done.get() && running) {
                long quiet = (System.nanoTime() - lastRowNanos) / 1_000_000;
                if (quiet >= rowDeadlineMs()) {
                  killed.set(true);
                  health.timedOut();
                  LOG.warn(
                      "nvidia-smi printed no sample for {} ms: killed, trying again in {} s",
                      quiet,
                      TIMEOUT_PAUSE_MS / 1000);
                  ExternalCommand.kill(p);
                  return;
                }
                try {
                  Thread.sleep(Math.min(500, rowDeadlineMs() - quiet));
                } catch (InterruptedException e) {
                  return;
                }
              }
            },
            "cudawatch-nvidia-smi-watchdog");
    dog.setDaemon(true);
    dog.start();
  }

  private void pause(long ms) throws InterruptedException {
    long end = System.nanoTime() + ms * 1_000_000;
    while (running && System.nanoTime() < end) {
      Thread.sleep(Math.min(200, Math.max(1, (end - System.nanoTime()) / 1_000_000)));
    }
  }

  /** nvidia-smi runs killed for printing nothing (a wedged GPU). */
  public long timeouts() {
    return health.timeouts();
  }

  @Override
  public boolean stopRequested() {
    return !running;
  }

  /** The latest sample of each GPU seen. */
  public java.util.Collection<MemorySample> latest() {
    return latest.values();
  }

  public long samples() {
    return samples.get();
  }

  public boolean warned() {
    return warned;
  }

  public void stop() {
    running = false;
    Process p = process;
    if (p != null) {
      ExternalCommand.kill(p); // what it started would hold the pipe open
    }
  }
}
