package dev.cudawatch.processor.jobs;

import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichFlatMapFunction;
import org.apache.flink.util.Collector;

/**
 * Turns the records of jobs that know their GPU or pid into "this job holds this GPU" signals, at
 * most one per job and GPU every {@code throttleMs} per subtask (exits always pass), so the fleet's
 * output is not shuffled again. The throttle is a bounded cache, not state.
 */
public final class GpuHolderSignals extends RichFlatMapFunction<LogRecord, GpuHolder> {
  private static final long serialVersionUID = 1L;
  static final int MAX_KEYS = 100_000;

  private final long throttleMs;
  private transient Map<String, Long> lastSent;

  public GpuHolderSignals(long throttleMs) {
    this.throttleMs = throttleMs;
  }

  @Override
  public void open(OpenContext ctx) {
    lastSent =
        new LinkedHashMap<>(1024, 0.75f, true) {
          @Override
          protected boolean removeEldestEntry(Map.Entry<String, Long> e) {
            return size() > MAX_KEYS;
          }
        };
  }

  @Override
  public void flatMap(LogRecord r, Collector<GpuHolder> out) {
    if (r.job() == null
        || r.kind() == RecordKind.GPU_MEMORY
        || r.kind() == RecordKind.KERNEL
        || r.kind() == RecordKind.QUIET) {
      return;
    }
    Integer pid = pid(r);
    if (r.gpu() == null && pid == null) {
      return;
    }
    boolean exit = r.kind() == RecordKind.EXIT;
    long at = r.eventTime().toEpochMilli();
    if (!exit) {
      String k = r.host() + "|" + r.job() + "|" + r.gpu();
      Long last = lastSent.get(k);
      if (last != null && Math.abs(at - last) < throttleMs) {
        return;
      }
      lastSent.put(k, at);
    }
    out.collect(GpuHolder.of(r.host(), r.job(), r.gpu(), pid, at, exit));
  }

  /** The wrapped process's pid, which {@code cudawatch run} records in the attribution. */
  static Integer pid(LogRecord r) {
    if (r.attribution() == null || r.attribution().get("pid") == null) {
      return null;
    }
    try {
      return Integer.valueOf(r.attribution().get("pid"));
    } catch (NumberFormatException e) {
      return null;
    }
  }
}
