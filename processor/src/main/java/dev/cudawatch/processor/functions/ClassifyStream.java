package dev.cudawatch.processor.functions;

import dev.cudawatch.common.text.TrainingOutput;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.diagnosis.advice.Advisor;
import dev.cudawatch.diagnosis.catalog.Catalog;
import dev.cudawatch.diagnosis.catalog.CatalogLoader;
import dev.cudawatch.diagnosis.engine.ClassifierSettings;
import dev.cudawatch.diagnosis.engine.LineMeta;
import dev.cudawatch.diagnosis.engine.StreamClassifier;
import dev.cudawatch.diagnosis.engine.StreamContext;
import dev.cudawatch.diagnosis.engine.StreamState;
import dev.cudawatch.diagnosis.engine.Warmup;
import dev.cudawatch.processor.config.ProcessorSettings;
import dev.cudawatch.processor.records.StreamStateSerializer;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Classifies each stream's lines in order (keyed by stream), with the catalog engine. Drops records
 * it has already seen (the agent resends after a crash; offsets only grow per stream), and emits an
 * incident once it settles, once the agent marks the stream quiet ({@link RecordKind#QUIET}), or
 * once the stream has been quiet here for {@code flushAfter}.
 */
public final class ClassifyStream extends KeyedProcessFunction<String, LogRecord, Incident> {
  private static final long serialVersionUID = 1L;

  private final LinkedHashMap<String, byte[]> extraCatalogs;
  private final long flushAfterMs;
  private final Duration stateTtl;
  private final int warmupLines;

  private transient Catalog catalog;
  private transient Advisor advisor;
  private transient ValueState<StreamState> state;
  private transient ValueState<Long> lastOffset;
  private transient ValueState<Long> previousFileOffset;
  private transient ValueState<Boolean> startsAtZero;
  private transient ValueState<Long> lastActivity;
  private transient Counter duplicates;
  private transient Counter fileRestarts;
  private transient Counter incidents;
  private transient Counter quietFlushes;

  /** With the flush delay, state TTL and warm-up of {@code settings}. */
  public ClassifyStream(Map<String, byte[]> extraCatalogs, ProcessorSettings settings) {
    this.extraCatalogs = new LinkedHashMap<>(extraCatalogs);
    this.flushAfterMs = settings.flushAfterMs();
    this.stateTtl = Duration.ofHours(settings.stateTtlHours());
    this.warmupLines = settings.warmupLines();
  }

  @Override
  public void open(OpenContext ctx) {
    catalog = new CatalogLoader().loadTexts(extraCatalogs);
    advisor = new Advisor(catalog.taxonomy());
    // Flink's default cleanup for heap state walks the state map on every access (seven per line),
    // re-creating its iterator over every key group once it has seen the few streams a subtask
    // holds: the classify stage's largest cost and most of its garbage (profile-job.md). Expired
    // streams go instead at their expiry check (onTimer) and are left out of every checkpoint.
    StateTtlConfig ttl =
        StateTtlConfig.newBuilder(stateTtl)
            .setUpdateType(StateTtlConfig.UpdateType.OnCreateAndWrite)
            .disableCleanupInBackground()
            .cleanupFullSnapshot()
            .build();
    state =
        getRuntimeContext()
            .getState(
                ttlOn(new ValueStateDescriptor<>("stream", StreamStateSerializer.INSTANCE), ttl));
    lastOffset =
        getRuntimeContext()
            .getState(ttlOn(new ValueStateDescriptor<>("last-offset", Long.class), ttl));
    previousFileOffset =
        getRuntimeContext()
            .getState(ttlOn(new ValueStateDescriptor<>("previous-file-offset", Long.class), ttl));
    startsAtZero =
        getRuntimeContext()
            .getState(ttlOn(new ValueStateDescriptor<>("starts-at-zero", Boolean.class), ttl));
    lastActivity =
        getRuntimeContext()
            .getState(ttlOn(new ValueStateDescriptor<>("last-activity", Long.class), ttl));
    duplicates = getRuntimeContext().getMetricGroup().counter("cudawatch_duplicate_records");
    fileRestarts = getRuntimeContext().getMetricGroup().counter("cudawatch_file_restarts");
    incidents = getRuntimeContext().getMetricGroup().counter("cudawatch_incidents");
    quietFlushes = getRuntimeContext().getMetricGroup().counter("cudawatch_quiet_flushes");
    warmUp(catalog, advisor, warmupLines);
  }

  /** Distinct lines of the warm-up. */
  static final int WARMUP_DISTINCT = 256;

  private static final java.util.concurrent.atomic.AtomicBoolean WARM =
      new java.util.concurrent.atomic.AtomicBoolean();

  /**
   * Classifies healthy training output, then a failing job's lines ({@link Warmup#failureLines}),
   * on a throwaway stream, outside Flink's state, so the JIT compiles the engine at the first task
   * start in a JVM and the first real lines do not meet it cold while everything else warms up too
   * (bench/run's first incident). The incidents its failures yield are dropped: nothing leaves the
   * throwaway classifier.
   */
  static void warmUp(Catalog catalog, Advisor advisor, int lines) {
    if (lines == 0 || !WARM.compareAndSet(false, true)) {
      return; // compiled code serves every subtask and every recovery in this JVM
    }
    StreamClassifier c =
        new StreamClassifier(
            catalog,
            advisor,
            new StreamContext("warmup", null, "warmup"),
            ClassifierSettings.defaults(),
            new StreamState());
    Instant t = Instant.EPOCH;
    LineMeta meta = new LineMeta("warmup", t, null, null);
    // a few hundred lines, formatted once and classified in turn: String.format of every line
    // cost more CPU at start than the classifying it warms (bench/results/profile-local-start.md)
    String[] text = new String[Math.min(WARMUP_DISTINCT, lines)];
    for (int i = 0; i < text.length; i++) {
      text[i] = TrainingOutput.line(i);
    }
    for (int i = 0; i < lines; i++) {
      c.accept(text[i % text.length], meta, t);
    }
    c.flush(t);
    // and a failing job's lines a few times over, so the first real failure does not meet the
    // incident's own paths (matching, fields, advice, rendering) cold: local's first incident came
    // ~60 ms sooner, in six alternated pairs (bench/results/profile-local-start.md)
    for (int i = 0; i < 3; i++) {
      for (String failure : Warmup.failureLines()) {
        c.accept(failure, meta, t);
      }
      c.flush(t);
    }
  }

  private static <T> ValueStateDescriptor<T> ttlOn(ValueStateDescriptor<T> d, StateTtlConfig ttl) {
    d.enableTimeToLive(ttl);
    return d;
  }

  @Override
  public void processElement(LogRecord r, Context ctx, Collector<Incident> out) throws Exception {
    if (r.kind() == RecordKind.GPU_MEMORY) {
      return;
    }
    Long last = lastOffset.value();
    if (r.kind() == RecordKind.QUIET) {
      closeOnQuiet(r, last, ctx, out);
      return;
    }
    long now = ctx.timerService().currentProcessingTime();
    if (last == null) {
      ctx.timerService().registerProcessingTimeTimer(expiryCheck(now));
      lastOffset.update(r.offset());
      if (r.offset() == 0) {
        startsAtZero.update(true);
      }
    } else if (!advance(r, last)) {
      duplicates.inc();
      return;
    }
    StreamState s = state.value();
    if (s == null) {
      s = new StreamState();
    }
    StreamClassifier c = classifier(r, s);
    List<Incident> found;
    try {
      found =
          c.accept(
              r.text(),
              new LineMeta(
                  r.id(),
                  r.eventTime(),
                  r.rank(),
                  r.localRank(),
                  r.gpu(),
                  r.gpuUuid(),
                  r.attribution(),
                  fromKernel(r)),
              Instant.ofEpochMilli(now));
    } catch (RuntimeException | StackOverflowError e) {
      // The engine changes the stream's state in place (heap state backend): a line it failed on
      // may have left it half-updated, so the stream starts over; the line counts as seen (its
      // offset was taken above), and the job's PoisonGuard dead-letters it.
      state.clear();
      lastActivity.clear();
      throw e;
    }
    emit(found, out);
    if (!s.isIdle()) {
      lastActivity.update(now);
      // Timers are rounded to 100 ms so a busy stream keeps one pending timer, not one per line.
      // The quiet they measure is measured here, after Kafka and Flink's network buffers: one
      // burst's lines can arrive a buffer timeout apart, so flushAfter must exceed it by a margin.
      ctx.timerService().registerProcessingTimeTimer(roundUp(now + flushAfterMs));
    }
    state.update(s);
  }

  @Override
  public void onTimer(long ts, OnTimerContext ctx, Collector<Incident> out) throws Exception {
    if (Math.floorMod(ts, HOUR) == HOUR - 1) {
      checkExpiry(ts, ctx);
      return;
    }
    StreamState s = state.value();
    Long active = lastActivity.value();
    if (s == null || s.isIdle() || active == null) {
      return;
    }
    if (ts - active >= flushAfterMs) {
      emit(flushing(s).flush(Instant.ofEpochMilli(ts)), out);
      state.update(s);
      lastActivity.clear();
    } else {
      ctx.timerService().registerProcessingTimeTimer(roundUp(active + flushAfterMs));
    }
  }

  /**
   * The agent saw the stream's writer go quiet after the line ending at the marker's offset: what
   * is open is complete, so it is emitted now rather than when the flush timer fires (that timer
   * stays for sources that send no markers, and finds the stream idle). A marker that a newer line
   * overtook (a re-read after a failed send) or that follows nothing is ignored. It leaves the
   * offset alone: the next line starts at the marker's offset and is no duplicate.
   */
  private void closeOnQuiet(LogRecord r, Long last, Context ctx, Collector<Incident> out)
      throws Exception {
    StreamState s = state.value();
    if (s == null || s.isIdle() || last == null || r.offset() <= last) {
      return;
    }
    long now = ctx.timerService().currentProcessingTime();
    emit(flushing(s).flush(Instant.ofEpochMilli(now)), out);
    state.update(s);
    lastActivity.clear();
    quietFlushes.inc();
  }

  /**
   * Whether a record came from a kernel source: the agent's kmsg or kernel_log, a shipper's kernel
   * input (its format decides: kmsg, kern.log, the journal's kernel transport). Only those speak
   * for the hardware; a job's output that quotes a kernel line is recorded, never acted on.
   */
  static boolean fromKernel(LogRecord r) {
    return r.kind() == RecordKind.KERNEL;
  }

  /**
   * Moves the stream's cursors past {@code r}; false for a re-send. A shipped file that rotated
   * starts a new cursor and the rotated file keeps its own while its last lines come in.
   */
  private boolean advance(LogRecord r, long last) throws Exception {
    Long previous = previousFileOffset.value();
    boolean zeroBased = Boolean.TRUE.equals(startsAtZero.value());
    if (r.offset() == 0 && !zeroBased) {
      startsAtZero.update(true);
    }
    switch (FileRestarts.judge(r, last, previous, zeroBased)) {
      case NEXT -> {
        lastOffset.update(r.offset());
        if (previous != null && r.offset() >= previous) {
          previousFileOffset.clear(); // the new file passed it: offsets cannot tell them apart
        }
      }
      case PREVIOUS_FILE -> previousFileOffset.update(r.offset());
      case RESTART -> {
        fileRestarts.inc(); // a shipped file rotated or truncated: new lines under its name
        previousFileOffset.update(last);
        lastOffset.update(r.offset());
      }
      default -> {
        return false;
      }
    }
    return true;
  }

  private static final long HOUR = 3_600_000L;

  /**
   * When a stream's state is next checked for expiry: at least a TTL after {@code t}, one
   * millisecond before a whole hour, which no flush timer (whole 100 ms) can be, so that each
   * stream keeps one chain of checks.
   */
  private long expiryCheck(long t) {
    return Math.floorDiv(t + stateTtl.toMillis(), HOUR) * HOUR + HOUR - 1;
  }

  /**
   * Reading a state whose TTL has passed drops it: a stream silent for a TTL leaves nothing behind,
   * one still written to is checked again a TTL later.
   */
  private void checkExpiry(long ts, OnTimerContext ctx) throws Exception {
    boolean left = lastOffset.value() != null;
    left |= previousFileOffset.value() != null;
    left |= startsAtZero.value() != null;
    left |= state.value() != null;
    left |= lastActivity.value() != null;
    if (left) {
      ctx.timerService().registerProcessingTimeTimer(expiryCheck(ts));
    }
  }

  private static long roundUp(long t) {
    return (t / 100 + 1) * 100;
  }

  private StreamClassifier classifier(LogRecord r, StreamState s) {
    return new StreamClassifier(
        catalog,
        advisor,
        new StreamContext(r.host(), r.job(), r.source()),
        ClassifierSettings.defaults(),
        s);
  }

  /** A classifier to flush with: no line at hand, so it keeps the context of the stream's lines. */
  private StreamClassifier flushing(StreamState s) {
    return new StreamClassifier(catalog, advisor, null, ClassifierSettings.defaults(), s);
  }

  private void emit(List<Incident> list, Collector<Incident> out) {
    for (Incident i : list) {
      incidents.inc();
      out.collect(i);
    }
  }
}
