package dev.cudawatch.launcher;

import dev.cudawatch.common.gpu.MemorySample;
import dev.cudawatch.common.gpu.NvidiaSmiCsv;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * Replays a recorded GPU sampler file ({@code nvidia-smi --query-gpu=timestamp,index,pci.bus_id,
 * memory.used,memory.total --format=csv,noheader,nounits}, {@code #} comments allowed) as if the
 * sampler read it now: at its recorded pace, each sample's time moved by the same offset, so that
 * growth rates stay true and the samples line up with logs written during the replay.
 */
public final class RecordedSamples implements Runnable {
  private final List<MemorySample> samples;
  private final String host;
  private final Consumer<LogRecord> out;
  private final Clock clock;
  private volatile boolean running = true;
  private volatile int shipped;
  private volatile long startedAt;

  public RecordedSamples(Path file, String host, Consumer<LogRecord> out, Clock clock)
      throws IOException {
    this.host = host;
    this.out = out;
    this.clock = clock;
    NvidiaSmiCsv csv = NvidiaSmiCsv.agentFormat();
    List<MemorySample> xs = new ArrayList<>();
    int bad = 0;
    for (String line : Files.readAllLines(file)) {
      if (line.isBlank() || line.startsWith("#") || NvidiaSmiCsv.isHeader(line)) {
        continue;
      }
      var s = csv.parse(line);
      if (s.isPresent()) {
        xs.add(s.get());
      } else {
        bad++;
      }
    }
    if (xs.isEmpty()) {
      throw new IOException(
          file + ": no samples (" + bad + " unreadable lines); expected the sampler's rows");
    }
    this.samples = List.copyOf(xs);
  }

  /** PCI address (the kernel log's form) to GPU index, as the recording names them. */
  public java.util.Map<String, Integer> pciToGpu() {
    java.util.Map<String, Integer> m = new java.util.HashMap<>();
    for (MemorySample s : samples) {
      if (s.pci() != null) {
        m.put(s.pci(), s.gpu());
      }
    }
    return m;
  }

  public int size() {
    return samples.size();
  }

  /** When the first sample's moment was replayed (epoch ms), 0 before the replay started. */
  public long startedAt() {
    return startedAt;
  }

  public int shipped() {
    return shipped;
  }

  @Override
  public void run() {
    long start = clock.millis();
    startedAt = start;
    long first = samples.get(0).epochMillis();
    String runId = "replay-" + Long.toString(start, 36);
    for (int i = 0; i < samples.size() && running; i++) {
      MemorySample s = samples.get(i);
      long due = start + (s.epochMillis() - first);
      long wait = due - clock.millis();
      if (wait > 0) {
        try {
          Thread.sleep(wait); // the recorded pace: a replay is real time, as the sampler was
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
      if (!running) {
        return; // stopped while waiting: the shipper may be closed already
      }
      MemorySample now = new MemorySample(due, s.gpu(), s.pci(), s.usedBytes(), s.totalBytes());
      out.accept(
          LogRecord.builder().host(host).kind(RecordKind.GPU_MEMORY).stream("nvidia-smi")
              .source("nvidia-smi")
              .sourceId(runId)
              .offset(i)
              .eventTime(java.time.Instant.ofEpochMilli(due))
              .text(NvidiaSmiCsv.toAgentRow(now))
              .build());
      shipped = i + 1;
    }
  }

  public void stop() {
    running = false;
  }
}
