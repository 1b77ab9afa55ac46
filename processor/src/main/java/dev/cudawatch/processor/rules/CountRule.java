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
 * Evaluates {@code count} rules in event time, keyed by rule and key fields. Fires when the window
 * holds {@code threshold} incidents, resolves when it holds fewer again, and then forgets the key:
 * state and timers exist only while incidents are in a window, so per-key state stays bounded.
 */
public final class CountRule extends KeyedProcessFunction<String, RuleEvent, Alert> {
  private static final long serialVersionUID = 1L;

  /** Incidents remembered per key; past it the oldest are forgotten (the window is full anyway). */
  static final int MAX_EVENTS = 10_000;

  private final RuleSet rules;
  private transient Map<String, RuleSpec> byName;
  private transient MapState<String, Long> events; // incident id -> event time
  private transient MapState<String, String> values; // incident id -> the value counted
  private transient ValueState<Long> firingSince;
  private transient ValueState<Long> timer;

  public CountRule(RuleSet rules) {
    this.rules = rules;
  }

  @Override
  public void open(OpenContext ctx) {
    byName = new LinkedHashMap<>();
    rules.ofType(RuleSpec.COUNT).forEach(r -> byName.put(r.name(), r));
    events =
        getRuntimeContext()
            .getMapState(new MapStateDescriptor<>("events", Types.STRING, Types.LONG));
    values =
        getRuntimeContext()
            .getMapState(new MapStateDescriptor<>("values", Types.STRING, Types.STRING));
    firingSince =
        getRuntimeContext().getState(new ValueStateDescriptor<>("firing-since", Types.LONG));
    timer = getRuntimeContext().getState(new ValueStateDescriptor<>("timer", Types.LONG));
  }

  @Override
  public void processElement(RuleEvent e, Context ctx, Collector<Alert> out) throws Exception {
    RuleSpec r = byName.get(e.rule());
    if (r == null || events.contains(e.incidentId())) {
      return; // an unknown rule (reloaded away) or an incident counted already
    }
    long window = r.windowSeconds() * 1000;
    Long wm = ctx.timerService().currentWatermark();
    if (wm != Long.MIN_VALUE && e.eventTime() < wm - window) {
      return; // later than the window: it cannot change this alert any more
    }
    events.put(e.incidentId(), e.eventTime());
    values.put(e.incidentId(), e.distinctValue());
    trim();
    evaluate(r, e.labels(), e.unknown(), Math.max(e.eventTime(), wm), ctx, out);
  }

  @Override
  public void onTimer(long ts, OnTimerContext ctx, Collector<Alert> out) throws Exception {
    timer.clear();
    RuleSpec r = byName.get(RuleKeys.rule(ctx.getCurrentKey()));
    if (r == null) {
      events.clear();
      values.clear();
      firingSince.clear();
      return;
    }
    evaluate(r, null, null, ts, ctx, out);
  }

  /**
   * Drops incidents out of the window at {@code now}, fires or resolves, and sets the next timer.
   */
  private void evaluate(
      RuleSpec r,
      Map<String, String> labels,
      String unknown,
      long now,
      Context ctx,
      Collector<Alert> out)
      throws Exception {
    long window = r.windowSeconds() * 1000;
    long oldestInWindow = Long.MAX_VALUE;
    java.util.Set<String> counted = new java.util.HashSet<>();
    List<String> expired = new ArrayList<>();
    for (Map.Entry<String, Long> e : events.entries()) {
      if (e.getValue() <= now - window) {
        expired.add(e.getKey());
      } else {
        String v = values.get(e.getKey());
        counted.add(v != null ? v : e.getKey());
        oldestInWindow = Math.min(oldestInWindow, e.getValue());
      }
    }
    for (String id : expired) {
      events.remove(id);
      values.remove(id);
    }
    int count = counted.size();
    Long since = firingSince.value();
    Map<String, String> keyLabels =
        labels != null ? labels : RuleAlerts.labelsFromKey(r, ctx.getCurrentKey());
    if (count >= r.threshold() && since == null) {
      firingSince.update(now);
      out.collect(
          RuleAlerts.withUnknown(
              alert(r, keyLabels, count, Alert.State.FIRING, now, null), keyLabels, unknown));
    } else if (count < r.threshold() && since != null) {
      firingSince.clear();
      out.collect(alert(r, keyLabels, count, Alert.State.RESOLVED, since, now));
    }
    Long t = timer.value();
    if (t != null) {
      ctx.timerService().deleteEventTimeTimer(t);
      timer.clear();
    }
    if (count > 0) {
      long next = oldestInWindow + window; // when the oldest incident leaves the window
      ctx.timerService().registerEventTimeTimer(next);
      timer.update(next);
    } else {
      events.clear(); // nothing in the window: nothing left behind for this key
      values.clear();
    }
  }

  private void trim() throws Exception {
    int n = 0;
    String oldest = null;
    long oldestTs = Long.MAX_VALUE;
    for (Map.Entry<String, Long> e : events.entries()) {
      n++;
      if (e.getValue() < oldestTs) {
        oldestTs = e.getValue();
        oldest = e.getKey();
      }
    }
    if (n > MAX_EVENTS && oldest != null) {
      events.remove(oldest);
      values.remove(oldest);
    }
  }

  static Alert alert(
      RuleSpec r,
      Map<String, String> key,
      int count,
      Alert.State state,
      long startsAt,
      Long endsAt) {
    return RuleAlerts.alert(
        r,
        key,
        Map.of(
            "count",
            String.valueOf(count),
            "window_minutes",
            RuleAlerts.minutes(r.windowSeconds())),
        String.valueOf(count),
        state,
        startsAt,
        endsAt);
  }
}
