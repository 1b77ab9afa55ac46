package dev.cudawatch.diagnosis.trend;

import dev.cudawatch.common.gpu.MemorySample;
import dev.cudawatch.common.gpu.NvidiaSmiCsv;
import dev.cudawatch.common.wire.Incident;
import java.io.BufferedReader;
import java.io.IOException;
import java.time.ZoneId;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@code classify --gpu-samples}: joins a log's OOMs with the nvidia-smi samples of their GPU and
 * gives each its {@code memory_before} through {@link OomHistory#enrich}, as the stream does.
 *
 * <p>An OOM's GPU is its {@code gpu} field, or the only GPU in the samples. Its time is its event
 * time when it has one; a log read offline carries none, so the OOM is placed where its GPU's
 * memory was last released (a drop of at least {@link MemoryTrendDetector#JUMP_SHARE} of the card:
 * the failed process exiting), or after the last sample when memory was never released. The samples
 * are read in one pass, keeping per GPU only the {@link OomHistory#LOOK_BACK_MS} before the newest.
 */
public final class GpuSamplesJoin {
  /** Per GPU, at most this many samples (30 minutes at 250 ms), whatever the sampling rate. */
  static final int MAX_SAMPLES = 7_200;

  private final TrendSettings settings;
  private final ZoneId zone;

  /**
   * @param zone where the samples were written: nvidia-smi's timestamps carry no zone
   */
  public GpuSamplesJoin(TrendSettings settings, ZoneId zone) {
    this.settings = settings;
    this.zone = zone;
  }

  /** The incidents, OOMs enriched; {@code skipped} counts the rows that were not samples. */
  public record Result(List<Incident> incidents, long samples, long skipped) {}

  public Result join(List<Incident> incidents, BufferedReader csv) throws IOException {
    Map<Integer, Gpu> gpus = new HashMap<>();
    List<Long> timed = new ArrayList<>();
    for (Incident i : incidents) {
      if ("cuda_oom".equals(i.incidentClass()) && i.eventTime() != null) {
        timed.add(i.eventTime().toEpochMilli());
      }
    }
    NvidiaSmiCsv parser = null;
    long read = 0;
    long skipped = 0;
    for (String row = csv.readLine(); row != null; row = csv.readLine()) {
      if (row.isBlank() || row.startsWith("#")) {
        continue;
      }
      if (parser == null) {
        Optional<NvidiaSmiCsv> header =
            NvidiaSmiCsv.isHeader(row) ? NvidiaSmiCsv.fromHeader(row, zone) : Optional.empty();
        parser = header.orElse(NvidiaSmiCsv.agentFormat(zone));
        if (header.isPresent()) {
          continue;
        }
      }
      Optional<MemorySample> s = parser.parse(row);
      if (s.isEmpty() || !gpus.computeIfAbsent(s.get().gpu(), g -> new Gpu(timed)).add(s.get())) {
        skipped++; // not a sample, or one out of order for its GPU
      } else {
        read++;
      }
    }
    List<Incident> out = new ArrayList<>(incidents.size());
    for (Incident i : incidents) {
      out.add(enrich(i, gpus));
    }
    return new Result(out, read, skipped);
  }

  private Incident enrich(Incident i, Map<Integer, Gpu> gpus) {
    if (!"cuda_oom".equals(i.incidentClass())) {
      return i;
    }
    Gpu g =
        i.fields().get("gpu") instanceof Number n
            ? gpus.get(n.intValue())
            : gpus.size() == 1 ? gpus.values().iterator().next() : null;
    if (g == null || g.recent.isEmpty()) {
      return i;
    }
    if (i.eventTime() != null) {
      long at = i.eventTime().toEpochMilli();
      List<MemorySample> before = g.atOoms.get(at);
      return OomHistory.enrich(i, before != null ? before : List.copyOf(g.recent), at, settings);
    }
    return g.beforeRelease != null
        ? OomHistory.enrich(i, g.beforeRelease, g.releasedAt, settings)
        : OomHistory.enrich(i, List.copyOf(g.recent), g.recent.peekLast().epochMillis(), settings);
  }

  /**
   * One GPU's recent samples, its history at each timed OOM (taken as the samples pass it) and
   * before its last release of memory.
   */
  private static final class Gpu {
    final ArrayDeque<MemorySample> recent = new ArrayDeque<>();
    final java.util.TreeMap<Long, List<MemorySample>> atOoms = new java.util.TreeMap<>();
    final java.util.TreeSet<Long> pending;
    List<MemorySample> beforeRelease;
    long releasedAt;

    Gpu(List<Long> ooms) {
      pending = new java.util.TreeSet<>(ooms);
    }

    boolean add(MemorySample s) {
      MemorySample prev = recent.peekLast();
      if (prev != null && s.epochMillis() <= prev.epochMillis()) {
        return false;
      }
      // an OOM with a time sees the samples up to it, however long the file goes on after it
      while (!pending.isEmpty() && pending.first() < s.epochMillis()) {
        atOoms.put(pending.pollFirst(), List.copyOf(recent));
      }
      if (prev != null
          && prev.usedBytes() - s.usedBytes() >= MemoryTrendDetector.JUMP_SHARE * s.totalBytes()) {
        // the release itself stays in: OomHistory cuts the freed card off
        List<MemorySample> h = new ArrayList<>(recent);
        h.add(s);
        beforeRelease = h;
        releasedAt = s.epochMillis();
      }
      recent.addLast(s);
      while (recent.size() > MAX_SAMPLES
          || recent.peekFirst().epochMillis() < s.epochMillis() - OomHistory.LOOK_BACK_MS) {
        recent.removeFirst();
      }
      return true;
    }
  }
}
