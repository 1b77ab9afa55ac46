package dev.cudawatch.processor.rules;

import dev.cudawatch.common.wire.Alert;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Evaluates {@code spike} rules in event time: the count of a key's incidents in the recent window
 * against the rate of the baseline window before it. Fires when the recent window holds at least
 * {@code threshold} incidents and {@code factor} times what the baseline rate predicts (a baseline
 * of nothing counts as one incident per window, so a class never seen before still needs {@code
 * factor} incidents; a fresh job's first window has no baseline yet). It resolves below half the
 * factor, so a rate hovering at it does not flap. Counts live in one-minute buckets, so state per
 * key is bounded by the baseline's length, and the key is forgotten once its buckets have all aged
 * out.
 */
public final class SpikeRule extends KeyedProcessFunction<String, RuleEvent, Alert> {
  private static final long serialVersionUID = 1L;
  static final long BUCKET_MS = 60_000;

  /** Incident ids remembered to count an incident once; past it the oldest are forgotten. */
  static final int MAX_IDS = 10_000;

  private final RuleSet rules;
  private transient Map<String, RuleSpec> byName;
  private transient MapState<Long, Integer> buckets; // bucket start -> incidents
  private transient MapState<String, Long> recentIds; // incident id -> event time
  private transient ValueState<Long> firingSince;
  private transient ValueState<Long> timer;

  public SpikeRule(RuleSet rules) {
    this.rules = rules;
  }

  @Override
  public void open(OpenContext ctx) {
    byName = new LinkedHashMap<>();
    rules.ofType(RuleSpec.SPIKE).forEach(r -> byName.put(r.name(), r));
    buckets =
        getRuntimeContext().getMapState(new MapStateDescriptor<>("buckets", Types.LONG, Types.INT));
    recentIds =
        getRuntimeContext()
            .getMapState(new MapStateDescriptor<>("recent-ids", Types.STRING, Types.LONG));
    firingSince =
        getRuntimeContext().getState(new ValueStateDescriptor<>("firing-since", Types.LONG));
    timer = getRuntimeContext().getState(new ValueStateDescriptor<>("timer", Types.LONG));
  }

  @Override
  public void processElement(RuleEvent e, Context ctx, Collector<Alert> out) throws Exception {
    RuleSpec r = byName.get(e.rule());
    if (r == null || recentIds.contains(e.incidentId())) {
      return;
    }
    long wm = ctx.timerService().currentWatermark();
    long now = Math.max(e.eventTime(), wm);
    if (e.eventTime() <= now - r.baselineSeconds() * 1000) {
      return; // older than the baseline: it changes nothing any more
    }
    recentIds.put(e.incidentId(), e.eventTime());
    long b = bucketOf(e.eventTime());
    Integer n = buckets.get(b);
    buckets.put(b, n == null ? 1 : n + 1);
    evaluate(r, e.labels(), now, ctx, out);
  }

  @Override
  public void onTimer(long ts, OnTimerContext ctx, Collector<Alert> out) throws Exception {
    timer.clear();
    String key = ctx.getCurrentKey();
    RuleSpec r = byName.get(RuleKeys.rule(key));
    if (r == null) {
      clear(); // the rule was removed when the job was restored with new rules
      return;
    }
    evaluate(r, null, ts, ctx, out);
  }

  private void evaluate(
      RuleSpec r, Map<String, String> labels, long now, Context ctx, Collector<Alert> out)
      throws Exception {
    long window = r.windowSeconds() * 1000;
    long baseline = r.baselineSeconds() * 1000;
    long recent = 0;
    long before = 0;
    long earliest = Long.MAX_VALUE;
    List<Long> old = new ArrayList<>();
    for (Map.Entry<Long, Integer> e : buckets.entries()) {
      long end = e.getKey() + BUCKET_MS;
      if (end <= now - baseline) {
        old.add(e.getKey());
        continue;
      }
      earliest = Math.min(earliest, e.getKey());
      if (end > now - window) {
        recent += e.getValue();
      } else {
        before += e.getValue();
      }
    }
    for (Long b : old) {
      buckets.remove(b);
    }
    forgetIds(now - window - BUCKET_MS);
    // The baseline's rate over the span it really covers (a young key has less than the
    // baseline), as an expected count in one recent window; no history counts as one.
    long covered = Math.min(baseline, now - earliest) - window;
    double expected = covered < window ? 1.0 : Math.max(1.0, before * (double) window / covered);
    Long since = firingSince.value();
    // half the factor to resolve, so a rate hovering at the factor does not flap
    double needed = since == null ? r.factor() : r.factor() / 2;
    boolean spiking = recent >= r.threshold() && recent >= needed * expected;
    Map<String, String> key =
        labels != null ? labels : RuleAlerts.labelsFromKey(r, ctx.getCurrentKey());
    if (spiking && since == null) {
      firingSince.update(now);
      out.collect(alert(r, key, recent, expected, Alert.State.FIRING, now, null));
    } else if (!spiking && since != null) {
      firingSince.clear();
      out.collect(alert(r, key, recent, expected, Alert.State.RESOLVED, since, now));
    }
    Long t = timer.value();
    if (t != null) {
      ctx.timerService().deleteEventTimeTimer(t);
      timer.clear();
    }
    if (buckets.isEmpty()) {
      recentIds.clear(); // nothing left for this key: no state, no timer
      return;
    }
    long next = bucketOf(now) + BUCKET_MS; // the windows move on at each bucket boundary
    ctx.timerService().registerEventTimeTimer(next);
    timer.update(next);
  }

  private void forgetIds(long before) throws Exception {
    List<String> drop = new ArrayList<>();
    int n = 0;
    for (Map.Entry<String, Long> e : recentIds.entries()) {
      n++;
      if (e.getValue() < before) {
        drop.add(e.getKey());
      }
    }
    for (String id : drop) {
      recentIds.remove(id);
    }
    if (n - drop.size() > MAX_IDS) {
      recentIds.clear(); // a flood: duplicates of it may count twice, the window is full anyway
    }
  }

  private void clear() {
    buckets.clear();
    recentIds.clear();
    firingSince.clear();
  }

  private static long bucketOf(long t) {
    return Math.floorDiv(t, BUCKET_MS) * BUCKET_MS;
  }

  private static Alert alert(
      RuleSpec r,
      Map<String, String> key,
      long recent,
      double expected,
      Alert.State state,
      long startsAt,
      Long endsAt) {
    return RuleAlerts.alert(
        r,
        key,
        Map.of(
            "count", String.valueOf(recent),
            "expected", String.format("%.1f", expected),
            "factor", String.format("%.1f", recent / expected),
            "window_minutes", RuleAlerts.minutes(r.windowSeconds()),
            "baseline_hours", String.format("%.1f", r.baselineSeconds() / 3600.0)),
        String.valueOf(recent),
        state,
        startsAt,
        endsAt);
  }
}
