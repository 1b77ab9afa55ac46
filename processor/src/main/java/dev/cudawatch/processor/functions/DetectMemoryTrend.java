package dev.cudawatch.processor.functions;

import dev.cudawatch.common.gpu.MemorySample;
import dev.cudawatch.common.gpu.NvidiaSmiCsv;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.diagnosis.advice.Advisor;
import dev.cudawatch.diagnosis.catalog.Catalog;
import dev.cudawatch.diagnosis.trend.MemoryTrendDetector;
import dev.cudawatch.diagnosis.trend.OomHistory;
import dev.cudawatch.diagnosis.trend.TrendIncidents;
import dev.cudawatch.diagnosis.trend.TrendSettings;
import dev.cudawatch.processor.records.MemorySampleCodec;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.functions.co.KeyedCoProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Watches GPU memory samples per host and GPU and warns with a {@code memory_leak} incident when
 * memory is heading to full, at most once per {@code repeatAfter} for a GPU. A new job on the GPU
 * (samples that name one) starts a new trend, so the trend is also per job and rank. OOM incidents
 * of the same GPU pass through here and leave enriched with what memory did before them ({@code
 * memory_before}: steady_leak, sudden_spike, fragmentation, steady_high, with the evidence), from
 * the GPU's samples of the last 30 minutes ({@link OomHistory#LOOK_BACK_MS}, thinned past two
 * minutes), so an OOM whose line arrives after many later samples still sees what came before it.
 */
public final class DetectMemoryTrend
    extends KeyedCoProcessFunction<String, LogRecord, Incident, Incident> {
  private static final long serialVersionUID = 1L;

  private final TrendSettings settings;
  private final Duration repeatAfter;
  private final Duration stateTtl;
  private transient Advisor advisor;
  private transient NvidiaSmiCsv csv;
  // the GPU's recent samples, oldest first: the detector is rebuilt from them under current
  // settings
  private transient ValueState<List<MemorySample>> samples;
  private transient ValueState<Long> lastWarned;
  private transient ValueState<String> job;

  public DetectMemoryTrend(TrendSettings settings, Duration repeatAfter, Duration stateTtl) {
    this.settings = settings;
    this.repeatAfter = repeatAfter;
    this.stateTtl = stateTtl;
  }

  /** Key of an OOM incident: its host and GPU, as {@link #keyOf(LogRecord)} keys samples. */
  public static String keyOf(Incident i) {
    return i.host() + "|gpu" + i.fields().get("gpu");
  }

  /** OOMs that name their GPU and host can learn from that GPU's samples. */
  public static boolean enrichable(Incident i) {
    return "cuda_oom".equals(i.incidentClass())
        && i.host() != null
        && i.fields().get("gpu") instanceof Number;
  }

  /** Key of a memory sample: host and GPU index, or null for records that are not samples. */
  public static String keyOf(LogRecord r) {
    if (r.kind() != RecordKind.GPU_MEMORY) {
      return r.streamKey();
    }
    Optional<MemorySample> s = NvidiaSmiCsv.agentFormat().parse(r.text());
    return r.host() + "|gpu" + s.map(MemorySample::gpu).orElse(-1);
  }

  @Override
  public void open(OpenContext ctx) {
    advisor = new Advisor(Catalog.builtIn().taxonomy());
    csv = NvidiaSmiCsv.agentFormat();
    // expired GPUs also leave savepoints and full checkpoints, not only when next read
    StateTtlConfig ttl = StateTtlConfig.newBuilder(stateTtl).cleanupFullSnapshot().build();
    ValueStateDescriptor<List<MemorySample>> d =
        new ValueStateDescriptor<>("samples", Types.LIST(MemorySampleCodec.TYPE));
    d.enableTimeToLive(ttl);
    samples = getRuntimeContext().getState(d);
    ValueStateDescriptor<Long> w = new ValueStateDescriptor<>("last-warned", Long.class);
    w.enableTimeToLive(ttl);
    lastWarned = getRuntimeContext().getState(w);
    ValueStateDescriptor<String> j = new ValueStateDescriptor<>("job", String.class);
    j.enableTimeToLive(ttl);
    job = getRuntimeContext().getState(j);
  }

  @Override
  public void processElement1(LogRecord r, Context ctx, Collector<Incident> out) throws Exception {
    if (r.kind() != RecordKind.GPU_MEMORY) {
      return;
    }
    Optional<MemorySample> sample = csv.parse(r.text());
    if (sample.isEmpty()) {
      return;
    }
    // Computes on a copy of the kept samples first, writes state after: a sample the detector
    // fails on leaves this GPU's state as it was.
    MemoryTrendDetector d = detector();
    String sampleJob = r.job() == null ? null : r.job() + "/" + r.rank();
    boolean newJob = sampleJob != null && !sampleJob.equals(job.value());
    if (newJob || d == null) {
      d = new MemoryTrendDetector(settings); // another job's memory owes nothing to the last's
    }
    var trend = d.add(sample.get());
    if (newJob) {
      job.update(sampleJob);
      lastWarned.clear();
    }
    samples.update(d.samples());
    if (trend.isPresent()) {
      Long last = lastWarned.value();
      long t = sample.get().epochMillis();
      if (last == null || t - last >= repeatAfter.toMillis()) {
        lastWarned.update(t);
        out.collect(
            TrendIncidents.of(
                trend.get(),
                advisor,
                r.host(),
                r.source(),
                r.offset(),
                Instant.ofEpochMilli(ctx.timerService().currentProcessingTime())));
      }
    }
  }

  @Override
  public void processElement2(Incident oom, Context ctx, Collector<Incident> out) throws Exception {
    List<MemorySample> kept = samples.value();
    if (kept == null) {
      out.collect(oom);
      return;
    }
    // the pattern and its evidence come from diagnosis, as for classify --gpu-samples
    long at = (oom.eventTime() != null ? oom.eventTime() : oom.detectedTime()).toEpochMilli();
    out.collect(OomHistory.enrich(oom, kept, at, settings));
  }

  private MemoryTrendDetector detector() throws Exception {
    List<MemorySample> kept = samples.value();
    return kept == null ? null : MemoryTrendDetector.resume(settings, kept);
  }
}
