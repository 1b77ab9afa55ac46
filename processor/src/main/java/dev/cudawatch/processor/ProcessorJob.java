package dev.cudawatch.processor;

import dev.cudawatch.common.Topics;
import dev.cudawatch.common.wire.Action;
import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.DeadLetter;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.JobFailure;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.diagnosis.trend.TrendSettings;
import dev.cudawatch.processor.config.ProcessorSettings;
import dev.cudawatch.processor.functions.ClampEventTime;
import dev.cudawatch.processor.functions.ClassifyStream;
import dev.cudawatch.processor.functions.CorrelateXid;
import dev.cudawatch.processor.functions.DetectMemoryTrend;
import dev.cudawatch.processor.functions.IncidentAlerts;
import dev.cudawatch.processor.functions.ParseLogRecords;
import dev.cudawatch.processor.guard.Guarded;
import dev.cudawatch.processor.guard.PoisonGuard;
import dev.cudawatch.processor.health.DetectJobSlowdown;
import dev.cudawatch.processor.health.DetectSlowRanks;
import dev.cudawatch.processor.health.ExtractStepTimes;
import dev.cudawatch.processor.health.GpuHealthLedger;
import dev.cudawatch.processor.health.ShadowAlerts;
import dev.cudawatch.processor.health.StepAlerts;
import dev.cudawatch.processor.health.StepSample;
import dev.cudawatch.processor.jobs.AttributeKernelIncidents;
import dev.cudawatch.processor.jobs.GpuHolderCodec;
import dev.cudawatch.processor.jobs.GpuHolderSignals;
import dev.cudawatch.processor.jobs.GroupJobFailures;
import dev.cudawatch.processor.records.ActionCodec;
import dev.cudawatch.processor.records.AlertCodec;
import dev.cudawatch.processor.records.IncidentCodec;
import dev.cudawatch.processor.records.JobFailureCodec;
import dev.cudawatch.processor.records.LogRecordCodec;
import dev.cudawatch.processor.records.RawRecord;
import dev.cudawatch.processor.records.RawRecordCodec;
import dev.cudawatch.processor.rules.CountRule;
import dev.cudawatch.processor.rules.JobActivity;
import dev.cudawatch.processor.rules.JobFailures;
import dev.cudawatch.processor.rules.JobSignal;
import dev.cudawatch.processor.rules.JobSignalCodec;
import dev.cudawatch.processor.rules.MatchRules;
import dev.cudawatch.processor.rules.RuleEvent;
import dev.cudawatch.processor.rules.RuleEventCodec;
import dev.cudawatch.processor.rules.RuleSet;
import dev.cudawatch.processor.rules.RuleSpec;
import dev.cudawatch.processor.rules.SilenceRule;
import dev.cudawatch.processor.rules.SpikeRule;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * The Flink job, wired in one place: log records in, incidents and alerts out. Source and sinks
 * come from the caller (Kafka in production, anything in tests), as in flink-training.
 */
public final class ProcessorJob {
  private final Source<RawRecord, ?, ?> source;
  private final Sink<Incident> incidents;
  private final Sink<Alert> alerts;
  private final Sink<DeadLetter> deadLetters;
  private final Sink<JobFailure> jobFailures;
  private final Sink<Action> actions;
  private final ProcessorSettings settings;
  private final Map<String, byte[]> catalogs;
  private final RuleSet rules;
  private final List<DataStream<DeadLetter>> dead = new ArrayList<>();

  private ProcessorJob(Builder b) {
    this.source = Objects.requireNonNull(b.source, "source");
    this.incidents = Objects.requireNonNull(b.incidents, "incidents");
    this.alerts = Objects.requireNonNull(b.alerts, "alerts");
    this.deadLetters = Objects.requireNonNull(b.deadLetters, "deadLetters");
    this.jobFailures = b.jobFailures;
    this.actions = b.actions;
    this.settings = b.settings;
    this.catalogs = b.catalogs;
    this.rules = b.rules == null ? RuleSet.load(Map.of()) : b.rules;
  }

  /** A job with {@code settings}, no extra catalogs and the built-in rules only. */
  public static Builder builder(ProcessorSettings settings) {
    return new Builder(settings);
  }

  /**
   * Source and sinks come from the caller; source, incidents, alerts and dead letters are needed,
   * job failures and actions (recommendations and shadow alerts) are dropped when not given.
   */
  public static final class Builder {
    private final ProcessorSettings settings;
    private Source<RawRecord, ?, ?> source;
    private Sink<Incident> incidents;
    private Sink<Alert> alerts;
    private Sink<DeadLetter> deadLetters;
    private Sink<JobFailure> jobFailures;
    private Sink<Action> actions;
    private Map<String, byte[]> catalogs = Map.of();
    private RuleSet rules;

    private Builder(ProcessorSettings settings) {
      this.settings = Objects.requireNonNull(settings, "settings");
    }

    public Builder source(Source<RawRecord, ?, ?> source) {
      this.source = source;
      return this;
    }

    public Builder incidents(Sink<Incident> sink) {
      this.incidents = sink;
      return this;
    }

    public Builder alerts(Sink<Alert> sink) {
      this.alerts = sink;
      return this;
    }

    public Builder deadLetters(Sink<DeadLetter> sink) {
      this.deadLetters = sink;
      return this;
    }

    /** Where job failures go ({@code cudawatch.job-failures}). */
    public Builder jobFailures(Sink<JobFailure> sink) {
      this.jobFailures = sink;
      return this;
    }

    /** Where recommendations and shadow alerts go ({@code cudawatch.actions}). */
    public Builder actions(Sink<Action> sink) {
      this.actions = sink;
      return this;
    }

    /** Extra signature catalogs, by name (the files' texts). */
    public Builder catalogs(Map<String, byte[]> catalogs) {
      this.catalogs = catalogs;
      return this;
    }

    public Builder rules(RuleSet rules) {
      this.rules = rules;
      return this;
    }

    public ProcessorJob build() {
      return new ProcessorJob(this);
    }
  }

  /**
   * How long the edges that carry every line (or every progress line, GPU sample, job signal) hold
   * a network buffer before sending it part full: Flink's default. At a real rate their buffers
   * fill first; 5 ms made every record its own buffer at 10,000 lines/s (issue 19).
   */
  static final long LINE_EDGES_BUFFER_TIMEOUT_MS = 100;

  /**
   * Every other edge carries incidents, rule events, alerts: few records, each on the path from a
   * failing line to its alert, which crosses up to three shuffles after the classifier. They send
   * each record at once (0: no flusher thread either) instead of waiting up to the line edges'
   * timeout at each shuffle.
   */
  static final long INCIDENT_EDGES_BUFFER_TIMEOUT_MS = 0;

  /** Adds the pipeline to {@code env}; the caller executes it. */
  public void build(StreamExecutionEnvironment env) {
    env.setBufferTimeout(INCIDENT_EDGES_BUFFER_TIMEOUT_MS);
    Duration ttl = Duration.ofHours(settings.stateTtlHours());
    SingleOutputStreamOperator<LogRecord> parsed =
        env.fromSource(source, WatermarkStrategy.noWatermarks(), Topics.LOGS, RawRecordCodec.TYPE)
            .uid("source-logs")
            .process(new ParseLogRecords(settings.inputs()))
            .returns(LogRecordCodec.TYPE)
            .name("parse-records")
            .uid("parse-records");
    dead.clear();
    dead.add(parsed.getSideOutput(ParseLogRecords.DEAD_LETTERS));
    // No clock in the fleet may put a line past the time it reached Kafka (ClampEventTime says
    // why).
    DataStream<LogRecord> records =
        parsed
            .process(new ClampEventTime(settings.maxClockSkewSeconds() * 1000))
            .returns(LogRecordCodec.TYPE)
            .name("clamp-event-time")
            .uid("clamp-event-time");

    DataStream<Incident> classified =
        guarded(
            records
                .filter(r -> r.kind() != RecordKind.GPU_MEMORY)
                .name("lines")
                .setBufferTimeout(LINE_EDGES_BUFFER_TIMEOUT_MS)
                .keyBy(LogRecord::streamKey)
                .process(Guarded.keyed("classify", new ClassifyStream(catalogs, settings)))
                .returns(IncidentCodec.TYPE)
                .name("classify")
                .uid("classify"));
    // OOMs that name their GPU meet that GPU's memory samples, and leave with what came before.
    DataStream<Incident> fromMemory =
        guarded(
            records
                .filter(r -> r.kind() == RecordKind.GPU_MEMORY)
                .name("memory-samples")
                .setBufferTimeout(LINE_EDGES_BUFFER_TIMEOUT_MS)
                .connect(classified.filter(DetectMemoryTrend::enrichable).name("gpu-ooms"))
                .keyBy(DetectMemoryTrend::keyOf, DetectMemoryTrend::keyOf)
                .process(
                    Guarded.keyedCo(
                        "memory-trend",
                        new DetectMemoryTrend(
                            TrendSettings.defaults(),
                            Duration.ofMinutes(settings.memoryTrendRepeatMinutes()),
                            ttl)))
                .returns(IncidentCodec.TYPE)
                .name("memory-trend")
                .uid("memory-trend"));
    DataStream<Incident> fromLines =
        classified.filter(i -> !DetectMemoryTrend.enrichable(i)).name("not-gpu-ooms");
    DataStream<Incident> merged = fromLines.union(fromMemory);
    // Kernel lines name a GPU or a pid, not a job: the job that held it then owns the incident.
    DataStream<Incident> kernelAttributed =
        guarded(
            guarded(
                    records
                        .process(
                            Guarded.flatMap(
                                "gpu-holders", new GpuHolderSignals(settings.signalThrottleMs())))
                        .returns(GpuHolderCodec.TYPE)
                        .name("gpu-holders")
                        .uid("gpu-holders")
                        .setBufferTimeout(LINE_EDGES_BUFFER_TIMEOUT_MS))
                .connect(merged.filter(AttributeKernelIncidents::wanted).name("kernel-incidents"))
                .keyBy(AttributeKernelIncidents::keyOf, AttributeKernelIncidents::keyOf)
                .process(
                    Guarded.keyedCo("attribute-kernel-incidents", new AttributeKernelIncidents()))
                .returns(IncidentCodec.TYPE)
                .name("attribute-kernel-incidents")
                .uid("attribute-kernel-incidents"));
    // Step times from progress lines: a rank slower than its peers, a whole job slowing down.
    DataStream<StepSample> steps =
        guarded(
            records
                .process(Guarded.flatMap("step-times", new ExtractStepTimes(catalogs)))
                .returns(StepSample.class)
                .name("step-times")
                .uid("step-times")
                .setBufferTimeout(LINE_EDGES_BUFFER_TIMEOUT_MS));
    DataStream<Incident> stepIncidents =
        guarded(
                steps
                    .keyBy(StepSample::job)
                    .process(
                        Guarded.keyed("slow-ranks", new DetectSlowRanks(settings.health(), ttl)))
                    .returns(IncidentCodec.TYPE)
                    .name("slow-ranks")
                    .uid("slow-ranks"))
            .union(
                guarded(
                    steps
                        .keyBy(StepSample::job)
                        .process(
                            Guarded.keyed(
                                "job-slowdown", new DetectJobSlowdown(settings.health(), ttl)))
                        .returns(IncidentCodec.TYPE)
                        .name("job-slowdown")
                        .uid("job-slowdown")));
    DataStream<Incident> all =
        merged
            .filter(i -> !AttributeKernelIncidents.wanted(i))
            .name("attributed")
            .union(kernelAttributed, stepIncidents);
    // Rules and correlation work in event time: watermarks follow the incidents' first-line times.
    DataStream<Incident> timed =
        all.assignTimestampsAndWatermarks(
                WatermarkStrategy.<Incident>forBoundedOutOfOrderness(
                        Duration.ofSeconds(settings.maxOutOfOrderSeconds()))
                    .withTimestampAssigner(
                        (i, ts) ->
                            (i.eventTime() != null ? i.eventTime() : i.detectedTime())
                                .toEpochMilli())
                    .withIdleness(Duration.ofSeconds(settings.watermarkIdleSeconds())))
            .name("incident-time")
            .uid("incident-time");
    // An application incident beside a kernel Xid on its GPU is emitted again with a verdict.
    DataStream<Incident> verdicts =
        guarded(
            timed
                .filter(CorrelateXid::relevant)
                .name("correlatable")
                .keyBy(CorrelateXid::keyOf)
                .process(
                    Guarded.keyed(
                        "correlate-xid", new CorrelateXid(settings.xidWindowSeconds() * 1000)))
                .returns(IncidentCodec.TYPE)
                .name("correlate-xid")
                .uid("correlate-xid"));
    DataStream<Incident> published = all.union(verdicts);
    published.sinkTo(incidents).name(Topics.INCIDENTS).uid("sink-incidents");
    DataStream<RuleEvent> ruleEvents =
        guarded(
            timed
                .process(Guarded.flatMap("match-rules", new MatchRules(rules)))
                .returns(RuleEventCodec.TYPE)
                .name("match-rules")
                .uid("match-rules"));
    DataStream<Alert> countAlerts =
        guarded(
            ruleEvents
                .filter(e -> RuleSpec.COUNT.equals(e.type()))
                .name("count-events")
                .keyBy(RuleEvent::key)
                .process(Guarded.keyed("count-rules", new CountRule(rules)))
                .returns(AlertCodec.TYPE)
                .name("count-rules")
                .uid("count-rules"));
    DataStream<Alert> spikeAlerts =
        guarded(
            ruleEvents
                .filter(e -> RuleSpec.SPIKE.equals(e.type()))
                .name("spike-events")
                .keyBy(RuleEvent::key)
                .process(Guarded.keyed("spike-rules", new SpikeRule(rules)))
                .returns(AlertCodec.TYPE)
                .name("spike-rules")
                .uid("spike-rules"));
    // Silence needs every job's output, thinned to one signal per job per second before the
    // shuffle.
    DataStream<Alert> silenceAlerts =
        guarded(
            guarded(
                    records
                        .process(
                            Guarded.flatMap(
                                "job-activity",
                                new JobActivity(rules, settings.signalThrottleMs())))
                        .returns(JobSignalCodec.TYPE)
                        .name("job-activity")
                        .uid("job-activity")
                        .setBufferTimeout(LINE_EDGES_BUFFER_TIMEOUT_MS))
                .union(
                    guarded(
                        all.process(Guarded.flatMap("job-failures", new JobFailures(rules)))
                            .returns(JobSignalCodec.TYPE)
                            .name("job-failures")
                            .uid("job-failures")))
                .keyBy(JobSignal::key)
                .process(Guarded.keyed("silence-rules", new SilenceRule(rules, ttl)))
                .returns(AlertCodec.TYPE)
                .name("silence-rules")
                .uid("silence-rules"));
    // Every incident of a job, across hosts and ranks, becomes one job failure with one root cause.
    SingleOutputStreamOperator<JobFailure> failedJobs =
        guarded(
            timed
                .filter(GroupJobFailures::groupable)
                .name("job-incidents")
                .keyBy(Incident::job)
                .process(
                    Guarded.keyed(
                        "job-failures-grouped",
                        new GroupJobFailures(Duration.ofMinutes(settings.jobFailureGapMinutes()))))
                .returns(JobFailureCodec.TYPE)
                .name("job-failures-grouped")
                .uid("job-failures-grouped"));
    if (jobFailures != null) {
      failedJobs.sinkTo(jobFailures).name(Topics.JOB_FAILURES).uid("sink-job-failures");
    }
    // Per GPU: failures, Xids, verdicts, slow ranks, recoveries asked; the repair ladder.
    SingleOutputStreamOperator<Action> recommendations =
        guarded(
            published
                .filter(GpuHealthLedger::relevant)
                .name("gpu-incidents")
                .keyBy(GpuHealthLedger::keyOf)
                .process(Guarded.keyed("gpu-health-ledger", new GpuHealthLedger(settings.health())))
                .returns(ActionCodec.TYPE)
                .name("gpu-health-ledger")
                .uid("gpu-health-ledger"));
    DataStream<Alert> ruleAlerts =
        countAlerts.union(
            spikeAlerts,
            silenceAlerts,
            failedJobs.getSideOutput(GroupJobFailures.ALERTS),
            guarded(
                stepIncidents
                    .process(Guarded.flatMap("step-alerts", new StepAlerts()))
                    .returns(AlertCodec.TYPE)
                    .name("step-alerts")
                    .uid("step-alerts")),
            recommendations.getSideOutput(GpuHealthLedger.ALERTS));
    // Rules in shadow mode record what they would have alerted instead of alerting.
    SingleOutputStreamOperator<Alert> outgoing =
        guarded(
            guarded(
                    published
                        .process(Guarded.flatMap("incident-alerts", new IncidentAlerts()))
                        .returns(AlertCodec.TYPE)
                        .name("incident-alerts")
                        .uid("incident-alerts"))
                .union(ruleAlerts)
                .process(Guarded.process("shadow-alerts", new ShadowAlerts(settings.health())))
                .returns(AlertCodec.TYPE)
                .name("shadow-alerts")
                .uid("shadow-alerts"));
    outgoing.sinkTo(alerts).name(Topics.ALERTS).uid("sink-alerts");
    if (actions != null) {
      recommendations
          .union(outgoing.getSideOutput(ShadowAlerts.SHADOWED))
          .sinkTo(actions)
          .name(Topics.ACTIONS)
          .uid("sink-actions");
    }
    // every operator's dead letters, to one exactly-once sink
    DataStream<DeadLetter> letters = dead.get(0);
    for (DataStream<DeadLetter> d : dead.subList(1, dead.size())) {
      letters = letters.union(d);
    }
    letters.sinkTo(deadLetters).name(Topics.DEAD_LETTER).uid("sink-dead-letters");
  }

  /** Routes a guarded operator's dead letters ({@link PoisonGuard}) to the dead-letter sink. */
  private <T> SingleOutputStreamOperator<T> guarded(SingleOutputStreamOperator<T> op) {
    dead.add(op.getSideOutput(PoisonGuard.DEAD_LETTERS));
    return op;
  }
}
