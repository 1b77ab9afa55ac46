package dev.cudawatch.processor.health;

import dev.cudawatch.common.wire.Incident;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Finds a whole job that slowed down, keyed by job. The job's pace is, per bucket of event time,
 * the median over its ranks of each rank's last step time in it (so one slow rank does not move
 * it); when the last {@code slowdown_recent_buckets} buckets are all {@code slowdown_ratio} times
 * the median of the buckets before them (at least {@code slowdown_baseline_buckets}, at most {@link
 * #HISTORY}), the job slowed down at a change point: the first bucket of that slow run. One {@code
 * job_slowdown} incident per change; it re-arms once the job is back within half the margin of the
 * pace it had. State is bounded (a few dozen doubles, one value per rank in the open bucket) and
 * goes after {@code ttl} without step times.
 */
public final class DetectJobSlowdown extends KeyedProcessFunction<String, StepSample, Incident> {
  private static final long serialVersionUID = 1L;

  /** Closed buckets remembered: the baseline and the recent run. */
  static final int HISTORY = 32;

  private final double ratio;
  private final long bucketMs;
  private final int recentBuckets;
  private final int baselineBuckets;
  private final long ttlMs;

  private transient MapState<Integer, Double> open; // rank -> its last step time in the bucket
  private transient ValueState<Long> openStart;
  private transient ValueState<double[]> paces; // closed buckets' medians, oldest first
  private transient ValueState<long[]> starts; // their start times
  private transient ValueState<Double> reportedBaseline; // set while a slowdown is reported
  private transient ValueState<Long> cleanup;
  private transient Counter found;

  public DetectJobSlowdown(HealthSettings s, Duration ttl) {
    this.ratio = s.slowdownRatio();
    this.bucketMs = s.slowdownBucketSeconds() * 1000;
    this.recentBuckets = s.slowdownRecentBuckets();
    this.baselineBuckets = s.slowdownBaselineBuckets();
    this.ttlMs = ttl.toMillis();
  }

  @Override
  public void open(OpenContext ctx) {
    var rc = getRuntimeContext();
    open = rc.getMapState(new MapStateDescriptor<>("open-bucket", Types.INT, Types.DOUBLE));
    openStart = rc.getState(new ValueStateDescriptor<>("open-start", Types.LONG));
    paces =
        rc.getState(
            new ValueStateDescriptor<>(
                "paces", PrimitiveArrayTypeInfo.DOUBLE_PRIMITIVE_ARRAY_TYPE_INFO));
    starts =
        rc.getState(
            new ValueStateDescriptor<>(
                "starts", PrimitiveArrayTypeInfo.LONG_PRIMITIVE_ARRAY_TYPE_INFO));
    reportedBaseline = rc.getState(new ValueStateDescriptor<>("reported-baseline", Types.DOUBLE));
    cleanup = rc.getState(new ValueStateDescriptor<>("cleanup", Types.LONG));
    found = rc.getMetricGroup().counter("cudawatch_job_slowdowns");
  }

  @Override
  public void processElement(StepSample s, Context ctx, Collector<Incident> out) throws Exception {
    if (s.isExit()) {
      clear(ctx);
      return;
    }
    long bucket = Math.floorDiv(s.eventTime, bucketMs) * bucketMs;
    Long start = openStart.value();
    if (start == null) {
      openStart.update(bucket);
    } else if (bucket > start) {
      close(s.job, start, bucket, ctx, out);
      openStart.update(bucket);
    }
    if (open.contains(s.rank) || countOpen() < DetectSlowRanks.MAX_RANKS) {
      open.put(s.rank, s.seconds);
    }
    long now = ctx.timerService().currentProcessingTime();
    if (cleanup.value() != null) {
      ctx.timerService().deleteProcessingTimeTimer(cleanup.value());
    }
    cleanup.update(now + ttlMs);
    ctx.timerService().registerProcessingTimeTimer(now + ttlMs);
  }

  private void close(String job, long start, long next, Context ctx, Collector<Incident> out)
      throws Exception {
    double[] values = new double[DetectSlowRanks.MAX_RANKS];
    int n = 0;
    for (Double v : open.values()) {
      values[n++] = v;
    }
    open.clear();
    if (n == 0) {
      return;
    }
    double[] p = paces.value() == null ? new double[0] : paces.value();
    long[] t = starts.value() == null ? new long[0] : starts.value();
    int keep = Math.min(HISTORY - 1, p.length);
    p = Arrays.copyOfRange(p, p.length - keep, p.length + 1);
    t = Arrays.copyOfRange(t, t.length - keep, t.length + 1);
    p[p.length - 1] = Medians.of(values, n);
    t[t.length - 1] = start;
    paces.update(p);
    starts.update(t);
    judge(job, p, t, n, next, ctx, out);
  }

  private void judge(
      String job, double[] p, long[] t, int ranks, long at, Context ctx, Collector<Incident> out)
      throws Exception {
    int m = p.length;
    if (m < recentBuckets + baselineBuckets) {
      return;
    }
    double recent = Medians.of(Arrays.copyOfRange(p, m - recentBuckets, m), recentBuckets);
    Double reported = reportedBaseline.value();
    if (reported != null) {
      if (recent < reported * (1 + (ratio - 1) / 2)) {
        reportedBaseline.clear(); // back to its old pace: a later slowdown is news again
      }
      return;
    }
    double[] before = Arrays.copyOfRange(p, 0, m - recentBuckets);
    double baseline = Medians.of(before, before.length);
    double min = Double.MAX_VALUE;
    for (int i = m - recentBuckets; i < m; i++) {
      min = Math.min(min, p[i]);
    }
    if (min < baseline * ratio) {
      return;
    }
    int first = m - recentBuckets; // the change point: the start of the slow run
    while (first > 0 && p[first - 1] >= baseline * ratio) {
      first--;
    }
    reportedBaseline.update(baseline);
    found.inc();
    out.collect(
        StepIncidents.jobSlowdown(
            job,
            recent,
            baseline,
            t[first],
            ranks,
            at,
            Instant.ofEpochMilli(ctx.timerService().currentProcessingTime())));
  }

  private int countOpen() throws Exception {
    int n = 0;
    for (Integer ignored : open.keys()) {
      n++;
    }
    return n;
  }

  private void clear(Context ctx) throws Exception {
    if (cleanup.value() != null) {
      ctx.timerService().deleteProcessingTimeTimer(cleanup.value());
    }
    clearState();
  }

  private void clearState() {
    open.clear();
    openStart.clear();
    paces.clear();
    starts.clear();
    reportedBaseline.clear();
    cleanup.clear();
  }

  @Override
  public void onTimer(long ts, OnTimerContext ctx, Collector<Incident> out) throws Exception {
    if (cleanup.value() != null && ts >= cleanup.value()) {
      clearState();
    }
  }
}
