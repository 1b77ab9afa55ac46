package dev.cudawatch.processor.jobs;

import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.diagnosis.taxonomy.Taxonomy;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.functions.co.KeyedCoProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Attributes kernel incidents (Xids, a GPU off the bus, ECC) to the job that owned them, per host:
 * the job whose process the line names ({@code pid=...}), else the job that held the line's GPU at
 * the time (seen within {@link #RECENT_MS} and not exited more than {@link #EXIT_SLACK_MS} before).
 * The incident leaves with {@code job} set and {@code attribution.job} saying how.
 */
public final class AttributeKernelIncidents
    extends KeyedCoProcessFunction<String, GpuHolder, Incident, Incident> {
  private static final long serialVersionUID = 1L;

  /** Classes from a node's kernel log (taxonomy.yaml's {@code kernel_log: true}). */
  private static final Set<String> KERNEL_CLASSES = Taxonomy.builtIn().kernelLogClasses();

  /** A holder not seen for this long no longer holds its GPU (and is forgotten). */
  static final long RECENT_MS = 600_000;

  /** A job that exited this shortly before a kernel line may still be its cause (log delays). */
  static final long EXIT_SLACK_MS = 30_000;

  static final int MAX_HOLDERS = 1024;

  private transient MapState<String, GpuHolder> holders;

  /** Kernel incidents that do not know their job yet. */
  public static boolean wanted(Incident i) {
    return i.job() == null && KERNEL_CLASSES.contains(i.incidentClass());
  }

  public static String keyOf(GpuHolder h) {
    return h.host == null ? "" : h.host;
  }

  public static String keyOf(Incident i) {
    return i.host() == null ? "" : i.host();
  }

  @Override
  public void open(OpenContext ctx) {
    MapStateDescriptor<String, GpuHolder> d =
        new MapStateDescriptor<>("holders", Types.STRING, GpuHolderCodec.TYPE);
    // a host gone quiet for a day leaves state, savepoints and full checkpoints
    d.enableTimeToLive(
        StateTtlConfig.newBuilder(java.time.Duration.ofHours(24)).cleanupFullSnapshot().build());
    holders = getRuntimeContext().getMapState(d);
  }

  @Override
  public void processElement1(GpuHolder h, Context ctx, Collector<Incident> out) throws Exception {
    GpuHolder old = holders.get(h.key());
    if (old != null) {
      old.firstSeen = Math.min(old.firstSeen, h.firstSeen);
      old.lastSeen = Math.max(old.lastSeen, h.lastSeen);
      if (h.exitedAt != null) {
        old.exitedAt = h.exitedAt;
      }
      h = old;
    }
    holders.put(h.key(), h);
    // forget holders long gone, so a host's state stays small
    List<String> stale = new ArrayList<>();
    int n = 0;
    for (var e : holders.entries()) {
      n++;
      if (e.getValue().lastSeen < h.lastSeen - RECENT_MS) {
        stale.add(e.getKey());
      }
    }
    for (String k : stale) {
      holders.remove(k);
    }
    if (n - stale.size() > MAX_HOLDERS) {
      holders.remove(h.key()); // a flood of jobs on one host: attribution is best effort
    }
  }

  @Override
  public void processElement2(Incident i, Context ctx, Collector<Incident> out) throws Exception {
    long t = (i.eventTime() != null ? i.eventTime() : i.detectedTime()).toEpochMilli();
    Integer pid = number(i.fields().get("pid"));
    Integer gpu = number(i.fields().get("gpu"));
    GpuHolder byPid = null;
    GpuHolder byGpu = null;
    for (GpuHolder h : holders.values()) {
      boolean live =
          h.firstSeen <= t + EXIT_SLACK_MS
              && h.lastSeen >= t - RECENT_MS
              && (h.exitedAt == null || h.exitedAt >= t - EXIT_SLACK_MS);
      if (!live) {
        continue;
      }
      if (pid != null && pid.equals(h.pid)) {
        byPid = h;
      }
      if (gpu != null && gpu.equals(h.gpu) && (byGpu == null || h.lastSeen > byGpu.lastSeen)) {
        byGpu = h; // the latest user of the GPU
      }
    }
    if (byPid != null) {
      out.collect(i.withJob(byPid.job, "kernel line's pid " + pid + " (cudawatch run's process)"));
    } else if (byGpu != null) {
      out.collect(i.withJob(byGpu.job, "the job that held GPU " + gpu + " then (cudawatch run)"));
    } else {
      out.collect(i);
    }
  }

  private static Integer number(Object o) {
    if (o instanceof Number n) {
      return n.intValue();
    }
    try {
      return o == null ? null : Integer.valueOf(o.toString());
    } catch (NumberFormatException e) {
      return null;
    }
  }
}
