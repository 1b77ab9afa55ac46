package dev.cudawatch.ingest.streams;

import dev.cudawatch.common.gpu.GpuMemoryQuery;
import dev.cudawatch.common.gpu.MemorySample;
import dev.cudawatch.common.gpu.NvidiaSmiCsv;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
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
 * <p>nvidia-smi prints the node's local time with no zone; each row is shipped with its time
 * converted to UTC, offset written out ({@link NvidiaSmiCsv#toAgentRow}), and as the record's event
 * time, so nothing downstream has to know the node's zone.
 */
public final class GpuMemorySampler implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(GpuMemorySampler.class);

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
  private boolean warned;

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
            new ProcessBuilder(command()).redirectError(ProcessBuilder.Redirect.DISCARD).start();
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
        offset = off[0];
        process.waitFor();
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
      p.destroy();
    }
  }
}
