package dev.cudawatch.diagnosis.trend;

import dev.cudawatch.common.gpu.MemorySample;
import dev.cudawatch.common.wire.Incident;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What a GPU's memory did before an OOM, from its samples and the OOM message's figures: a steady
 * leak, a sudden spike, fragmentation (free memory the allocator could not use), or steadily high
 * use (the job simply does not fit). Each points to a different fix. The one place that turns a
 * history into a pattern: the stream ({@code DetectMemoryTrend}) and {@code classify --gpu-samples}
 * both call {@link #enrich}.
 *
 * <p>Every OOM with at least one sample of its GPU in the {@link #LOOK_BACK_MS} before it gets
 * exactly one pattern; {@code steady_high} is what is left when memory neither grew nor jumped.
 */
public final class OomHistory {
  /** Samples older than this before the OOM say nothing about it. */
  public static final long LOOK_BACK_MS = 30 * 60_000L;

  /**
   * A jump further back than this before the OOM is the job's set-up (a model load), not what
   * killed it.
   */
  static final long SPIKE_RECENT_MS = 120_000;

  /** A rise of this share of the card within {@link #SPIKE_WINDOW_MS} is a spike, however made. */
  static final double SPIKE_SHARE = 0.2;

  static final long SPIKE_WINDOW_MS = 10_000;

  /** One step of a jump: at least this share of the card (and four times the typical step). */
  static final double STEP_SHARE = 0.01;

  /** At or above this share of the card, steady use means the job does not fit. */
  static final double HIGH_SHARE = 0.9;

  private OomHistory() {}

  /** The pattern and its evidence; one of {@code memory_before}'s values. */
  public record Finding(String memoryBefore, Map<String, Object> fields, String nextStep) {}

  /**
   * The OOM with its {@code memory_before} pattern, the pattern's evidence and a first next step;
   * the OOM unchanged when no sample of its GPU lies in the look-back before {@code oomMillis}.
   */
  public static Incident enrich(
      Incident oom, List<MemorySample> samples, long oomMillis, TrendSettings t) {
    Optional<Finding> f = describe(samples, oomMillis, oom.fields(), t);
    if (f.isEmpty()) {
      return oom;
    }
    Map<String, Object> more = new LinkedHashMap<>();
    more.put("memory_before", f.get().memoryBefore());
    more.putAll(f.get().fields());
    return oom.withContext(more, f.get().nextStep());
  }

  /**
   * Describes the samples of one GPU before an OOM at {@code oomMillis}, with the OOM's fields
   * ({@code tried_to_allocate_bytes}, {@code reserved_unallocated_bytes}, ...). Empty only without
   * samples in the look-back.
   */
  public static Optional<Finding> describe(
      List<MemorySample> samples, long oomMillis, Map<String, Object> oomFields, TrendSettings t) {
    MemorySample[] xs =
        releasedAfter(
            samples.stream()
                .filter(
                    s ->
                        s.epochMillis() <= oomMillis && s.epochMillis() >= oomMillis - LOOK_BACK_MS)
                .sorted(Comparator.comparingLong(MemorySample::epochMillis))
                .toArray(MemorySample[]::new),
            oomMillis);
    if (xs.length == 0) {
      return Optional.empty();
    }
    MemorySample last = xs[xs.length - 1];
    Map<String, Object> evidence = new LinkedHashMap<>();
    double used = last.totalBytes() > 0 ? (double) last.usedBytes() / last.totalBytes() : 0;
    evidence.put("memory_used_fraction", Math.round(used * 1000) / 1000.0);
    evidence.put("memory_window_seconds", seconds(oomMillis - xs[0].epochMillis()));
    evidence.put("memory_samples", (long) xs.length);

    long tried = number(oomFields.get("tried_to_allocate_bytes"));
    long unallocated = number(oomFields.get("reserved_unallocated_bytes"));
    if (tried > 0 && unallocated >= tried) {
      return Optional.of(
          new Finding(
              "fragmentation",
              evidence,
              "Memory before the OOM: fragmented — the allocator held enough free memory but not in"
                  + " one piece; set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True."));
    }
    Optional<Double> leak = leak(xs, t);
    if (leak.isPresent()) {
      evidence.put("memory_growth_bytes_per_second", Math.round(leak.get()));
      return Optional.of(
          new Finding(
              "steady_leak",
              evidence,
              "Memory before the OOM: a steady leak of "
                  + Math.round(leak.get() / (1 << 20))
                  + " MiB/s — look for tensors kept across steps (losses appended without"
                  + " .item(), caches, growing lists)."));
    }
    Optional<Jump> jump = jump(xs, oomMillis);
    if (jump.isPresent()) {
      Jump j = jump.get();
      evidence.put("memory_jump_bytes", j.bytes());
      evidence.put("memory_jump_seconds_before", seconds(oomMillis - j.atMillis()));
      return Optional.of(
          new Finding(
              "sudden_spike",
              evidence,
              "Memory before the OOM: a sudden spike of "
                  + j.bytes() / (1 << 20)
                  + " MiB "
                  + Math.round(Math.max(0, oomMillis - j.atMillis()) / 1000.0)
                  + " s before it — look for one oversized batch, sequence or evaluation step,"
                  + " not a leak."));
    }
    String percent = Math.round(used * 100) + " %";
    return Optional.of(
        new Finding(
            "steady_high",
            evidence,
            used >= HIGH_SHARE
                ? "Memory before the OOM: steadily near full ("
                    + percent
                    + " of the card) — the job does not fit this GPU as configured; reduce the"
                    + " batch or shard the model."
                : "Memory before the OOM: steady at "
                    + percent
                    + " of the card, no growth and no jump — the failed request alone did not"
                    + " fit in what was free; check what asks for that much at once (batch,"
                    + " sequence length, a workspace)."));
  }

  /** The ramp since the last big allocation or release, when it is a steady leak: its slope. */
  private static Optional<Double> leak(MemorySample[] xs, TrendSettings t) {
    // a model load before a leak is not part of it
    MemorySample[] ramp = MemoryTrendDetector.sinceLastJump(xs);
    if (ramp.length < 3) {
      return Optional.empty();
    }
    double span = (ramp[ramp.length - 1].epochMillis() - ramp[0].epochMillis()) / 1000.0;
    int rising = 0;
    for (int i = 1; i < ramp.length; i++) {
      if (ramp[i].usedBytes() >= ramp[i - 1].usedBytes()) {
        rising++;
      }
    }
    double slope = MemoryTrendDetector.theilSen(ramp);
    return span >= t.minSpanSeconds()
            && rising >= t.minRisingFraction() * (ramp.length - 1)
            && slope >= t.minGrowthBytesPerSecond()
        ? Optional.of(slope)
        : Optional.empty();
  }

  /** A jump: memory rose by {@code bytes} in a run of big steps that ended at {@code atMillis}. */
  record Jump(long bytes, long atMillis) {}

  /**
   * The last jump up before the OOM, when it is recent and memory stayed up after it: a run of
   * consecutive steps up, each at least {@link #STEP_SHARE} of the card and four times the typical
   * step, together at least {@link MemoryTrendDetector#JUMP_SHARE} of it; or, however made, a rise
   * of {@link #SPIKE_SHARE} of the card within the last {@link #SPIKE_WINDOW_MS}.
   */
  static Optional<Jump> jump(MemorySample[] xs, long oomMillis) {
    if (xs.length < 2) {
      return Optional.empty();
    }
    MemorySample last = xs[xs.length - 1];
    long total = last.totalBytes();
    long[] steps = new long[xs.length - 1];
    for (int i = 1; i < xs.length; i++) {
      steps[i - 1] = Math.abs(xs[i].usedBytes() - xs[i - 1].usedBytes());
    }
    long[] sorted = steps.clone();
    Arrays.sort(sorted);
    long big = Math.max(4 * sorted[sorted.length / 2], (long) (STEP_SHARE * total));
    for (int end = xs.length - 1; end >= 1; end--) {
      if (oomMillis - xs[end].epochMillis() > SPIKE_RECENT_MS) {
        break;
      }
      if (xs[end].usedBytes() - xs[end - 1].usedBytes() < Math.max(big, 1)) {
        continue;
      }
      int start = end;
      while (start >= 2 && xs[start - 1].usedBytes() - xs[start - 2].usedBytes() >= big) {
        start--;
      }
      long bytes = xs[end].usedBytes() - xs[start - 1].usedBytes();
      if (bytes >= MemoryTrendDetector.JUMP_SHARE * total) {
        // memory fell back after it: that spike passed, it did not fill the card
        return last.usedBytes() >= xs[start - 1].usedBytes() + bytes / 2
            ? Optional.of(new Jump(bytes, xs[end].epochMillis()))
            : Optional.empty();
      }
      end = start; // a run too small to be a jump: look before it
    }
    // a fast ramp with no single big step (several seconds between samples of a fast climb)
    MemorySample before = null;
    for (MemorySample s : xs) {
      if (s.epochMillis() <= last.epochMillis() - SPIKE_WINDOW_MS) {
        before = s;
      }
    }
    if (before != null && last.usedBytes() - before.usedBytes() >= SPIKE_SHARE * total) {
      return Optional.of(new Jump(last.usedBytes() - before.usedBytes(), last.epochMillis()));
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

  /** Seconds to one decimal. */
  private static double seconds(long millis) {
    return Math.round(millis / 100.0) / 10.0;
  }

  private static long number(Object o) {
    return o instanceof Number n ? n.longValue() : 0;
  }
}
