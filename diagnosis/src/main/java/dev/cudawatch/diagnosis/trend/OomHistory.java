package dev.cudawatch.diagnosis.trend;

import dev.cudawatch.common.gpu.MemorySample;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What a GPU's memory did before an OOM, from its samples and the OOM message's figures: a steady
 * leak, a sudden spike, fragmentation (free memory the allocator could not use), or steadily high
 * use (the job simply does not fit). Each points to a different fix.
 */
public final class OomHistory {
  /** Spike: the last samples rose by this share of the card above the earlier median. */
  static final double SPIKE_SHARE = 0.2;

  static final long SPIKE_WINDOW_MS = 10_000;

  private OomHistory() {}

  /** The pattern and its evidence; one of {@code memory_before}'s values. */
  public record Finding(String memoryBefore, Map<String, Object> fields, String nextStep) {}

  /**
   * Describes the samples before an OOM at {@code oomMillis}, with the OOM's fields ({@code
   * tried_to_allocate_bytes}, {@code reserved_unallocated_bytes}, ...). Empty without samples.
   */
  public static Optional<Finding> describe(
      List<MemorySample> samples, long oomMillis, Map<String, Object> oomFields, TrendSettings t) {
    MemorySample[] xs =
        releasedAfter(
            samples.stream().filter(s -> s.epochMillis() <= oomMillis).toArray(MemorySample[]::new),
            oomMillis);
    if (xs.length < 3) {
      return Optional.empty();
    }
    MemorySample last = xs[xs.length - 1];
    long total = last.totalBytes();
    long tried = number(oomFields.get("tried_to_allocate_bytes"));
    long unallocated = number(oomFields.get("reserved_unallocated_bytes"));
    if (tried > 0 && unallocated >= tried) {
      return Optional.of(
          new Finding(
              "fragmentation",
              Map.of(),
              "Memory before the OOM: fragmented — the allocator held enough free memory but not in"
                  + " one piece; set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True."));
    }
    // the growth since the last big allocation: a model load before a leak is not part of it
    MemorySample[] ramp = MemoryTrendDetector.sinceLastJump(xs);
    double span = (last.epochMillis() - ramp[0].epochMillis()) / 1000.0;
    int rising = 0;
    for (int i = 1; i < ramp.length; i++) {
      if (ramp[i].usedBytes() >= ramp[i - 1].usedBytes()) {
        rising++;
      }
    }
    double slope = ramp.length < 3 ? 0 : MemoryTrendDetector.theilSen(ramp);
    if (span >= t.minSpanSeconds()
        && rising >= t.minRisingFraction() * (ramp.length - 1)
        && slope >= t.minGrowthBytesPerSecond()) {
      return Optional.of(
          new Finding(
              "steady_leak",
              Map.of("growth_bytes_per_second", Math.round(slope)),
              "Memory before the OOM: a steady leak of "
                  + Math.round(slope / (1 << 20))
                  + " MiB/s — look for tensors kept across steps (losses appended without"
                  + " .item(), caches, growing lists)."));
    }
    long cut = last.epochMillis() - SPIKE_WINDOW_MS;
    long[] earlier =
        Arrays.stream(xs)
            .filter(s -> s.epochMillis() < cut)
            .mapToLong(MemorySample::usedBytes)
            .sorted()
            .toArray();
    long peak =
        Arrays.stream(xs)
            .filter(s -> s.epochMillis() >= cut)
            .mapToLong(MemorySample::usedBytes)
            .max()
            .orElse(0);
    if (earlier.length >= 2 && total > 0) {
      long median = earlier[earlier.length / 2];
      if (peak - median >= SPIKE_SHARE * total) {
        return Optional.of(
            new Finding(
                "sudden_spike",
                Map.of("spike_bytes", peak - median),
                "Memory before the OOM: a sudden spike of "
                    + (peak - median) / (1 << 20)
                    + " MiB within seconds — look for one oversized batch, sequence or"
                    + " evaluation step, not a leak."));
      }
    }
    if (total > 0 && last.usedBytes() >= 0.9 * total) {
      return Optional.of(
          new Finding(
              "steady_high",
              Map.of(),
              "Memory before the OOM: steadily near full — the job does not fit this GPU as"
                  + " configured; reduce the batch or shard the model."));
    }
    return Optional.empty();
  }

  /** How late an OOM's line may be read after the process died and freed its memory. */
  static final long READ_DELAY_MS = 5_000;

  /**
   * The samples before the failed process freed its memory: a line is read (and timed) a little
   * after it was written, so samples of the freed card just before that time are cut off.
   */
  static MemorySample[] releasedAfter(MemorySample[] xs, long oomMillis) {
    for (int i = xs.length - 1; i >= 1 && xs[i].epochMillis() >= oomMillis - READ_DELAY_MS; i--) {
      long drop = xs[i - 1].usedBytes() - xs[i].usedBytes();
      if (drop >= MemoryTrendDetector.JUMP_SHARE * xs[i].totalBytes()) {
        return Arrays.copyOf(xs, i);
      }
    }
    return xs;
  }

  private static long number(Object o) {
    return o instanceof Number n ? n.longValue() : 0;
  }
}
