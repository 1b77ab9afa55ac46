package dev.cudawatch.processor.guard;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * At most one record per key per interval of the records' own time, before a shuffle: a bounded
 * cache of each key's last time (least recently seen keys go first), not Flink state, so losing it
 * on a restore only lets one more record of a key through. The records' time, not the clock, keeps
 * it deterministic; a time before the last one (ranks' clocks disagree a little) counts by its
 * distance.
 */
public final class PerKeyThrottle {
  private final long intervalMs;
  private final LinkedHashMap<String, Long> last;

  public PerKeyThrottle(long intervalMs, int maxKeys) {
    this.intervalMs = intervalMs;
    this.last =
        new LinkedHashMap<>(1024, 0.75f, true) {
          @Override
          protected boolean removeEldestEntry(Map.Entry<String, Long> e) {
            return size() > maxKeys;
          }
        };
  }

  /** Whether {@code key} passed a record less than the interval from {@code timeMs}. */
  public boolean throttled(String key, long timeMs) {
    Long t = last.get(key);
    return t != null && Math.abs(timeMs - t) < intervalMs;
  }

  /** Notes that {@code key} passed a record at {@code timeMs}. */
  public void passed(String key, long timeMs) {
    last.put(key, timeMs);
  }
}
