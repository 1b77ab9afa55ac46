package dev.cudawatch.processor.jobs;

import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.JobFailure;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.diagnosis.jobs.Culprit;
import dev.cudawatch.diagnosis.jobs.CulpritAnalysis;
import dev.cudawatch.diagnosis.jobs.RankEvidence;
import dev.cudawatch.processor.records.AlertCodec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * Groups every incident of one job (keyed by job, across hosts and ranks) in a session into one
 * {@link JobFailure}: the earliest root-class incident is the root cause (rank, host, GPU), the
 * rest are its consequences. A distributed job (its incidents name ranks) gets one {@code
 * JobFailure} alert: raised as soon as a root-class incident arrives (an earlier one that arrives
 * late replaces it, same fingerprint), and updated with the consequences when the session closes;
 * its ranks' incidents raise no {@code GpuJobFailure} of their own.
 *
 * <p>A session closes once no incident arrived for {@code gap}, in event time or in processing
 * time, whichever comes first (an idle fleet does not advance event time). Incidents of the job
 * that arrive within {@code gap} after it closed are counted as late consequences, not a second
 * failure, unless they are root-class. Nothing stays behind: state and timers end with the
 * session's cool-down.
 */
public final class GroupJobFailures extends KeyedProcessFunction<String, Incident, JobFailure> {
  private static final long serialVersionUID = 1L;

  /** The alerts, beside the records. */
  public static final OutputTag<Alert> ALERTS =
      new OutputTag<>("job-failure-alerts", AlertCodec.TYPE);

  /** Incidents remembered per job; beyond it they are counted, not listed. */
  static final int MAX_MEMBERS = 4096;

  /** Consequence ids listed in a record; the count stays exact. */
  static final int MAX_LISTED = 1000;

  public static final String ALERT_NAME = "JobFailure";

  /** Causes certain enough to page before the job's session closes. */
  private static final Set<Culprit.Cause> EARLY =
      java.util.EnumSet.of(
          Culprit.Cause.EARLIER_ERROR, Culprit.Cause.HUNG_OUTSIDE_COLLECTIVE, Culprit.Cause.KILLED);

  private final long gapMs;

  private transient MapState<String, JobMember> members;
  private transient ValueState<Long> overflow;
  private transient ValueState<Long> lastEvent; // latest incident's event time
  private transient ValueState<Long> eventTimer;
  private transient ValueState<Long> procTimer;
  private transient ValueState<String> alertedRoot; // the root the firing alert names
  private transient ValueState<Long> closedUntil; // cool-down after a close, processing time
  private transient Counter late;

  public GroupJobFailures(Duration gap) {
    this.gapMs = gap.toMillis();
  }

  /** Classes a detector finds (a leak, a slow rank): warnings, never a job's failure. */
  private static final java.util.Set<String> DETECTED =
      dev.cudawatch.diagnosis.taxonomy.Taxonomy.builtIn().classes().stream()
          .filter(c -> c.detector() != null)
          .map(c -> c.id())
          .collect(java.util.stream.Collectors.toUnmodifiableSet());

  /** Only incidents that know their job can be grouped by it. */
  public static boolean groupable(Incident i) {
    return i.job() != null && !i.job().isBlank() && !DETECTED.contains(i.incidentClass());
  }

  @Override
  public void open(OpenContext ctx) {
    members =
        getRuntimeContext()
            .getMapState(new MapStateDescriptor<>("members", Types.STRING, JobMemberCodec.TYPE));
    overflow = getRuntimeContext().getState(new ValueStateDescriptor<>("overflow", Types.LONG));
    lastEvent = getRuntimeContext().getState(new ValueStateDescriptor<>("last-event", Types.LONG));
    eventTimer =
        getRuntimeContext().getState(new ValueStateDescriptor<>("event-timer", Types.LONG));
    procTimer = getRuntimeContext().getState(new ValueStateDescriptor<>("proc-timer", Types.LONG));
    alertedRoot =
        getRuntimeContext().getState(new ValueStateDescriptor<>("alerted-root", Types.STRING));
    closedUntil =
        getRuntimeContext().getState(new ValueStateDescriptor<>("closed-until", Types.LONG));
    late = getRuntimeContext().getMetricGroup().counter("cudawatch_job_failure_late_consequences");
  }

  @Override
  public void processElement(Incident i, Context ctx, Collector<JobFailure> out) throws Exception {
    JobMember m = JobMember.of(i);
    long now = ctx.timerService().currentProcessingTime();
    if (closedUntil.value() != null && !m.rootClass) {
      late.inc(); // a straggler of the failure just published
      return;
    }
    if (members.contains(m.id)) {
      JobMember old = members.get(m.id);
      m.rootClass = old.rootClass; // a re-published incident (a verdict) is the same member
    } else if (countMembers() >= MAX_MEMBERS) {
      overflow.update((overflow.value() == null ? 0 : overflow.value()) + 1);
      return;
    }
    members.put(m.id, m);
    long last =
        Math.max(lastEvent.value() == null ? Long.MIN_VALUE : lastEvent.value(), m.eventTime);
    lastEvent.update(last);
    closedUntil.clear();
    replaceTimer(ctx, eventTimer, last + gapMs, true);
    replaceTimer(ctx, procTimer, now + gapMs, false);
    // page as soon as the culprit is known: a rank's own error, a rank that never issued the
    // collective the others wait in, a rank killed from outside; not a bare timeout
    Culprit culprit = culprit();
    JobMember root = culprit == null ? null : members.get(culprit.root().id());
    if (root != null
        && EARLY.contains(culprit.cause())
        && !culprit.ranks().isEmpty()
        && !root.id.equals(alertedRoot.value())) {
      alertedRoot.update(root.id);
      JobMember named = root.withCulprit(culprit.ranks().get(0).intValue(), culprit.gpu());
      ctx.output(
          ALERTS,
          alert(ctx.getCurrentKey(), named, culprit, List.of(), Set.of(root.host), 1, null));
    }
  }

  @Override
  public void onTimer(long ts, OnTimerContext ctx, Collector<JobFailure> out) throws Exception {
    boolean processing =
        ctx.timeDomain() == org.apache.flink.streaming.api.TimeDomain.PROCESSING_TIME;
    Long cool = closedUntil.value();
    if (cool != null) {
      if (processing && ts >= cool) {
        clearAll(ctx); // the cool-down is over: nothing of this job remains
      }
      return;
    }
    Long due = processing ? procTimer.value() : eventTimer.value();
    if (due == null || ts < due) {
      return;
    }
    close(ctx, out);
  }

  private void close(OnTimerContext ctx, Collector<JobFailure> out) throws Exception {
    Culprit culprit = culprit();
    JobMember root = culprit == null ? null : members.get(culprit.root().id());
    if (root == null) {
      clearAll(ctx);
      return;
    }
    Integer rank =
        culprit.ranks().isEmpty() ? root.rank : Integer.valueOf(culprit.ranks().get(0).intValue());
    String gpu = culprit.gpu();
    List<String> evidence = new ArrayList<>(culprit.evidence());
    if (culprit.gpuInferred()) {
      evidence.add(
          "GPU " + gpu + " is inferred from the rank's local rank (set_device(local_rank))");
    }
    List<JobMember> all = new ArrayList<>();
    members.values().forEach(all::add);
    all.sort((a, b) -> a.before(b) ? -1 : b.before(a) ? 1 : 0);
    List<String> consequences = new ArrayList<>();
    Set<String> hosts = new TreeSet<>();
    Set<Integer> ranks = new HashSet<>();
    long first = Long.MAX_VALUE;
    long lastAt = Long.MIN_VALUE;
    int count = 0;
    for (JobMember m : all) {
      hosts.add(m.host == null ? "unknown" : m.host);
      if (m.rank != null) {
        ranks.add(m.rank);
      }
      first = Math.min(first, m.eventTime);
      lastAt = Math.max(lastAt, m.eventTime);
      if (!m.id.equals(root.id)) {
        count++;
        if (consequences.size() < MAX_LISTED) {
          consequences.add(m.id);
        }
      }
    }
    count += overflow.value() == null ? 0 : overflow.value().intValue();
    String job = ctx.getCurrentKey();
    out.collect(
        new JobFailure(
            WireJson.VERSION,
            job + "@" + root.id,
            job,
            root.id,
            root.incidentClass,
            root.host,
            rank,
            gpu,
            root.summary,
            consequences,
            count,
            List.copyOf(hosts),
            ranks.size(),
            Instant.ofEpochMilli(first),
            Instant.ofEpochMilli(lastAt),
            culprit.cause().id(),
            evidence));
    if (!ranks.isEmpty()) {
      // a distributed job pages once, here; a single process's failure pages as GpuJobFailure
      ctx.output(
          ALERTS,
          alert(
              job, root.withCulprit(rank, gpu), culprit, consequences, hosts, ranks.size(), count));
    }
    long now = ctx.timerService().currentProcessingTime();
    clearAll(ctx);
    // stragglers within one more gap are consequences of this failure, not a new one
    closedUntil.update(now + gapMs);
    procTimer.update(now + gapMs);
    ctx.timerService().registerProcessingTimeTimer(now + gapMs);
  }

  /** The job's culprit so far (see {@link CulpritAnalysis}). */
  private Culprit culprit() throws Exception {
    List<RankEvidence> ev = new ArrayList<>();
    for (JobMember m : members.values()) {
      ev.add(m.evidence());
    }
    return CulpritAnalysis.analyze(ev);
  }

  private int countMembers() throws Exception {
    int n = 0;
    for (String ignored : members.keys()) {
      n++;
    }
    return n;
  }

  private void replaceTimer(Context ctx, ValueState<Long> slot, long at, boolean eventTime)
      throws Exception {
    Long old = slot.value();
    if (old != null && old == at) {
      return;
    }
    if (old != null) {
      if (eventTime) {
        ctx.timerService().deleteEventTimeTimer(old);
      } else {
        ctx.timerService().deleteProcessingTimeTimer(old);
      }
    }
    if (eventTime) {
      ctx.timerService().registerEventTimeTimer(at);
    } else {
      ctx.timerService().registerProcessingTimeTimer(at);
    }
    slot.update(at);
  }

  private void clearAll(Context ctx) throws Exception {
    if (eventTimer.value() != null) {
      ctx.timerService().deleteEventTimeTimer(eventTimer.value());
    }
    if (procTimer.value() != null) {
      ctx.timerService().deleteProcessingTimeTimer(procTimer.value());
    }
    members.clear();
    overflow.clear();
    lastEvent.clear();
    eventTimer.clear();
    procTimer.clear();
    alertedRoot.clear();
    closedUntil.clear();
  }

  /** The job's one alert; its labels (and so its fingerprint) name only the job. */
  static Alert alert(
      String job,
      JobMember root,
      Culprit culprit,
      List<String> consequences,
      Set<String> hosts,
      int ranks,
      Integer consequenceCount) {
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put("alertname", ALERT_NAME);
    labels.put("job", job);
    labels.put("severity", "critical");
    Map<String, String> ann = new LinkedHashMap<>();
    String where =
        (root.rank != null ? "rank " + root.rank + " on " : "on ")
            + (root.host == null ? "an unknown host" : root.host)
            + " GPU "
            + (root.gpu == null ? "unknown" : root.gpu);
    String summary = "Job " + job + " failed: " + root.incidentClass + " " + where;
    if (consequenceCount != null && consequenceCount > 0) {
      summary +=
          "; "
              + consequenceCount
              + " other incident(s) on "
              + ranks
              + " rank(s) and "
              + hosts.size()
              + " host(s) are consequences";
    }
    ann.put("summary", summary);
    ann.put(
        "description",
        "The job's earliest failure that is not a consequence of another rank's: fix this one; "
            + "the NCCL timeouts and aborts of the other ranks followed from it. "
            + (root.summary == null ? "" : root.summary));
    ann.put("root_incident", root.id);
    ann.put("root_class", root.incidentClass);
    ann.put("root_host", root.host == null ? "unknown" : root.host);
    ann.put("root_rank", root.rank == null ? "unknown" : String.valueOf(root.rank));
    ann.put("root_gpu", root.gpu == null ? "unknown" : root.gpu);
    if (culprit != null) {
      ann.put("culprit_cause", culprit.cause().id());
      ann.put("evidence", String.join("; ", culprit.evidence()));
      ann.put(
          "description",
          "Rank "
              + ann.get("root_rank")
              + ": "
              + culprit.cause().words()
              + ". "
              + String.join("; ", culprit.evidence())
              + ". "
              + (root.summary == null ? "" : root.summary));
    }
    ann.put("consequences", String.valueOf(consequenceCount == null ? 0 : consequenceCount));
    if (!consequences.isEmpty()) {
      ann.put(
          "consequence_ids",
          String.join(",", consequences.subList(0, Math.min(50, consequences.size()))));
    }
    ann.put("value", String.valueOf(consequenceCount == null ? 0 : consequenceCount));
    Instant start = Instant.ofEpochMilli(root.eventTime);
    return new Alert(
        WireJson.VERSION,
        Alert.fingerprintOf(labels),
        Alert.State.FIRING,
        labels,
        ann,
        start,
        start.plus(dev.cudawatch.processor.functions.IncidentAlerts.ACTIVE_FOR));
  }
}
