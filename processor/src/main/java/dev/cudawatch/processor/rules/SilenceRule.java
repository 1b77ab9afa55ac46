package dev.cudawatch.processor.rules;

import dev.cudawatch.common.wire.Alert;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Evaluates {@code silence} rules: after a job fails, fires when it writes nothing for {@code
 * for_seconds} and has not exited (a hang after an error, typically a collective that never
 * returns). Resolves when the job writes again or exits. Silence is measured in processing time: a
 * silent stream has no event time to advance. State exists only for failed jobs, and a job that
 * never comes back is forgotten (and its alert resolved) after the state TTL.
 */
public final class SilenceRule extends KeyedProcessFunction<String, JobSignal, Alert> {
  private static final long serialVersionUID = 1L;

  /** How long an exit is remembered for a failure's incident that arrives after it. */
  static final long EXIT_MEMORY_MS = 10 * 60_000L;

  private final RuleSet rules;
  private final long forgetAfterMs;
  private transient Map<String, RuleSpec> byName;
  private transient ValueState<String> failure; // the class of the failure being watched
  private transient ValueState<Long> lastHeard; // processing time of the last output
  private transient ValueState<Long> firingSince;
  private transient ValueState<Long> timer;
  // the event time of an exit not preceded by a watched failure: the failure's incident may still
  // be on its way (it waits for its traceback to end, and a lagging pipeline delays it further)
  private transient ValueState<Long> exitedAt;

  public SilenceRule(RuleSet rules, Duration forgetAfter) {
    this.rules = rules;
    this.forgetAfterMs = forgetAfter.toMillis();
  }

  @Override
  public void open(OpenContext ctx) {
    byName = new LinkedHashMap<>();
    rules.ofType(RuleSpec.SILENCE).forEach(r -> byName.put(r.name(), r));
    failure = getRuntimeContext().getState(new ValueStateDescriptor<>("failure", Types.STRING));
    lastHeard = getRuntimeContext().getState(new ValueStateDescriptor<>("last-heard", Types.LONG));
    firingSince =
        getRuntimeContext().getState(new ValueStateDescriptor<>("firing-since", Types.LONG));
    timer = getRuntimeContext().getState(new ValueStateDescriptor<>("timer", Types.LONG));
    exitedAt = getRuntimeContext().getState(new ValueStateDescriptor<>("exited-at", Types.LONG));
  }

  @Override
  public void processElement(JobSignal s, Context ctx, Collector<Alert> out) throws Exception {
    RuleSpec r = byName.get(s.rule());
    if (r == null) {
      return;
    }
    long now = ctx.timerService().currentProcessingTime();
    switch (s.kind()) {
      case FAILURE -> {
        Long exited = exitedAt.value();
        if (exited != null && s.eventTimeMs() <= exited) {
          return; // the job exited after this failure: its exit overtook the incident
        }
        exitedAt.clear();
        if (firingSince.value() == null) {
          failure.update(s.incidentClass());
          lastHeard.update(now);
          schedule(ctx, now + r.forSeconds() * 1000);
        }
      }
      case ACTIVITY -> {
        if (failure.value() == null) {
          Long exited = exitedAt.value();
          if (exited != null && s.eventTimeMs() > exited) {
            exitedAt.clear(); // it runs again (a restart under the same job id)
            deleteTimer(ctx);
          }
          return; // a healthy job: nothing to watch, nothing stored
        }
        if (firingSince.value() != null) {
          resolve(r, s.labels(), now, ctx, out); // it speaks again
        } else {
          lastHeard.update(now);
        }
      }
      case EXIT -> {
        if (failure.value() != null) {
          resolve(r, s.labels(), now, ctx, out); // it ended; the failure was reported already
        } else {
          // remembered a while: the incident of the failure it exited with may still be on its way
          Long before = exitedAt.value();
          exitedAt.update(before == null ? s.eventTimeMs() : Math.max(before, s.eventTimeMs()));
          schedule(ctx, now + Math.max(r.forSeconds() * 1000, EXIT_MEMORY_MS));
        }
      }
      default -> throw new IllegalStateException(s.kind().name());
    }
  }

  @Override
  public void onTimer(long ts, OnTimerContext ctx, Collector<Alert> out) throws Exception {
    timer.clear();
    String key = ctx.getCurrentKey();
    RuleSpec r = byName.get(RuleKeys.rule(key));
    Long heard = lastHeard.value();
    if (r == null || heard == null) { // also the end of an exit's memory
      clear();
      return;
    }
    Map<String, String> labels = RuleAlerts.labelsFromKey(r, key);
    Long since = firingSince.value();
    if (since != null) {
      resolve(r, labels, ts, ctx, out); // silent past the state TTL: forget it
    } else if (ts - heard >= r.forSeconds() * 1000) {
      firingSince.update(ts);
      out.collect(alert(r, labels, failure.value(), Alert.State.FIRING, ts, null));
      schedule(ctx, ts + forgetAfterMs);
    } else {
      schedule(ctx, heard + r.forSeconds() * 1000);
    }
  }

  private void resolve(
      RuleSpec r, Map<String, String> labels, long now, Context ctx, Collector<Alert> out)
      throws Exception {
    Long since = firingSince.value();
    if (since != null) {
      out.collect(alert(r, labels, failure.value(), Alert.State.RESOLVED, since, now));
    }
    deleteTimer(ctx);
    clear();
  }

  private void deleteTimer(Context ctx) throws Exception {
    Long t = timer.value();
    if (t != null) {
      ctx.timerService().deleteProcessingTimeTimer(t);
      timer.clear();
    }
  }

  private void schedule(Context ctx, long at) throws Exception {
    Long t = timer.value();
    if (t != null) {
      ctx.timerService().deleteProcessingTimeTimer(t);
    }
    ctx.timerService().registerProcessingTimeTimer(at);
    timer.update(at);
  }

  private void clear() {
    exitedAt.clear();
    failure.clear();
    lastHeard.clear();
    firingSince.clear();
    timer.clear();
  }

  private static Alert alert(
      RuleSpec r,
      Map<String, String> key,
      String failureClass,
      Alert.State state,
      long startsAt,
      Long endsAt) {
    return RuleAlerts.alert(
        r,
        key,
        Map.of(
            "class",
            failureClass == null ? "a failure" : failureClass,
            "for_minutes",
            RuleAlerts.minutes(r.forSeconds())),
        failureClass == null ? "" : failureClass,
        state,
        startsAt,
        endsAt);
  }
}
