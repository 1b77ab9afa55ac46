package dev.cudawatch.processor.health;

import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.diagnosis.catalog.CatalogLoader;
import dev.cudawatch.diagnosis.catalog.StepTimeExtractor;
import dev.cudawatch.processor.guard.PerKeyThrottle;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichFlatMapFunction;
import org.apache.flink.metrics.Counter;
import org.apache.flink.util.Collector;

/**
 * Step times from the lines of ranked jobs, through the catalog's {@code step_times} patterns (the
 * built-in ones and a site's). Stateless, before the shuffle: only lines that state a step time, of
 * a job and a rank, leave it, at most one per rank per {@link #SAMPLE_MS} of the lines' own time. A
 * progress bar redraws itself up to ten times a second with a rate it already smooths, and the
 * rules compare medians over tens of seconds; a rank's lines within that time of its last sample
 * are not matched at all (the patterns' matching was a third of the parse stage's CPU,
 * bench/results/profile-job.md).
 */
public final class ExtractStepTimes extends RichFlatMapFunction<LogRecord, StepSample> {
  private static final long serialVersionUID = 1L;

  private final LinkedHashMap<String, byte[]> catalogs;

  /** A rank's step times closer than this to its last sample are left out. */
  static final long SAMPLE_MS = 500;

  /** Ranks a subtask remembers the last sample of (least recently sampled forgotten first). */
  static final int MAX_RANKS = 100_000;

  private transient StepTimeExtractor steps;
  private transient Counter samples;
  private transient PerKeyThrottle perRank;

  public ExtractStepTimes(Map<String, byte[]> catalogs) {
    this.catalogs = new LinkedHashMap<>(catalogs);
  }

  @Override
  public void open(OpenContext ctx) {
    steps = new CatalogLoader().loadTexts(catalogs).stepTimes();
    samples = getRuntimeContext().getMetricGroup().counter("cudawatch_step_samples");
    perRank = new PerKeyThrottle(SAMPLE_MS, MAX_RANKS);
  }

  @Override
  public void flatMap(LogRecord r, Collector<StepSample> out) {
    if (r.kind() == RecordKind.EXIT && r.job() != null) {
      long t = (r.eventTime() != null ? r.eventTime() : r.ingestTime()).toEpochMilli();
      out.collect(StepSample.exit(r.job(), t)); // the job's pace state can go
      return;
    }
    if (r.kind() != RecordKind.LOG || r.job() == null || r.rank() == null || r.text() == null) {
      return;
    }
    long t = (r.eventTime() != null ? r.eventTime() : r.ingestTime()).toEpochMilli();
    String rank = r.job() + '\0' + r.rank();
    if (perRank.throttled(rank, t)) {
      return;
    }
    double s = steps.secondsPerStep(r.text());
    if (Double.isNaN(s)) {
      return;
    }
    perRank.passed(rank, t);
    samples.inc();
    out.collect(new StepSample(r.job(), r.rank(), r.host(), r.gpu(), r.gpuUuid(), t, s));
  }
}
