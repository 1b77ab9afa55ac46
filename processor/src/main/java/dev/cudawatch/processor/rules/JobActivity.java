package dev.cudawatch.processor.rules;

import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.processor.guard.PerKeyThrottle;
import java.util.List;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichFlatMapFunction;
import org.apache.flink.util.Collector;

/**
 * Turns log records into the activity the silence rules watch, at most one signal per job every
 * {@code throttleMs} per subtask, so the fleet's whole output is not shuffled a second time. Exits
 * always pass. The throttle is a bounded cache, not state: losing it on restore only lets an extra
 * signal through.
 */
public final class JobActivity extends RichFlatMapFunction<LogRecord, JobSignal> {
  private static final long serialVersionUID = 1L;
  static final int MAX_JOBS = 100_000;

  private final List<RuleSpec> rules;
  private final long throttleMs;
  private transient PerKeyThrottle lastSent;

  public JobActivity(RuleSet rules, long throttleMs) {
    this.rules = rules.ofType(RuleSpec.SILENCE);
    this.throttleMs = throttleMs;
  }

  @Override
  public void open(OpenContext ctx) {
    lastSent = new PerKeyThrottle(throttleMs, MAX_JOBS);
  }

  @Override
  public void flatMap(LogRecord r, Collector<JobSignal> out) {
    if (rules.isEmpty()
        || r.job() == null
        || r.kind() == RecordKind.GPU_MEMORY
        || r.kind() == RecordKind.QUIET) { // a marker is no output: a silent job stays silent
      return;
    }
    boolean exit = r.kind() == RecordKind.EXIT;
    // the record's own time keeps the throttle deterministic; ranks' clocks may disagree a little
    java.time.Instant at = r.eventTime() != null ? r.eventTime() : r.ingestTime();
    long now = at != null ? at.toEpochMilli() : Long.MAX_VALUE;
    if (!exit) {
      String job = RuleKeys.of(r.host() == null ? "" : r.host(), java.util.List.of(r.job()));
      if (lastSent.throttled(job, now)) {
        return;
      }
      lastSent.passed(job, now);
    }
    for (RuleSpec rule : rules) {
      JobSignal s =
          SilenceKeys.signal(
              rule,
              r.host(),
              r.job(),
              exit ? JobSignal.Kind.EXIT : JobSignal.Kind.ACTIVITY,
              null,
              now);
      if (s != null) {
        out.collect(s);
      }
    }
  }
}
