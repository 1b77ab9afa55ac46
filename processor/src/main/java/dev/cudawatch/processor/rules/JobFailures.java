package dev.cudawatch.processor.rules;

import dev.cudawatch.common.wire.Incident;
import java.util.List;
import org.apache.flink.api.common.functions.FlatMapFunction;
import org.apache.flink.util.Collector;

/** Turns root incidents of the silence rules' classes into failure signals for their jobs. */
public final class JobFailures implements FlatMapFunction<Incident, JobSignal> {
  private static final long serialVersionUID = 1L;
  private final List<RuleSpec> rules;

  public JobFailures(RuleSet rules) {
    this.rules = rules.ofType(RuleSpec.SILENCE);
  }

  @Override
  public void flatMap(Incident i, Collector<JobSignal> out) {
    if (!i.root()) {
      return;
    }
    for (RuleSpec r : rules) {
      if (r.classes().contains(i.incidentClass())) {
        JobSignal s =
            SilenceKeys.signal(
                r,
                i.host(),
                i.job(),
                JobSignal.Kind.FAILURE,
                i.incidentClass(),
                i.eventTime() != null ? i.eventTime().toEpochMilli() : Long.MIN_VALUE);
        if (s != null) {
          out.collect(s);
        }
      }
    }
  }
}
