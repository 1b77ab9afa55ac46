package dev.cudawatch.processor.health;

import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.diagnosis.catalog.CatalogLoader;
import dev.cudawatch.diagnosis.catalog.StepTimeExtractor;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichFlatMapFunction;
import org.apache.flink.metrics.Counter;
import org.apache.flink.util.Collector;

/**
 * Step times from the lines of ranked jobs, through the catalog's {@code step_times} patterns (the
 * built-in ones and a site's). Stateless, before the shuffle: only lines that state a step time, of
 * a job and a rank, leave it.
 */
public final class ExtractStepTimes extends RichFlatMapFunction<LogRecord, StepSample> {
  private static final long serialVersionUID = 1L;

  private final LinkedHashMap<String, byte[]> catalogs;
  private transient StepTimeExtractor steps;
  private transient Counter samples;

  public ExtractStepTimes(Map<String, byte[]> catalogs) {
    this.catalogs = new LinkedHashMap<>(catalogs);
  }

  @Override
  public void open(OpenContext ctx) {
    steps = new CatalogLoader().loadTexts(catalogs).stepTimes();
    samples = getRuntimeContext().getMetricGroup().counter("cudawatch_step_samples");
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
    double s = steps.secondsPerStep(r.text());
    if (Double.isNaN(s)) {
      return;
    }
    samples.inc();
    long t = (r.eventTime() != null ? r.eventTime() : r.ingestTime()).toEpochMilli();
    out.collect(new StepSample(r.job(), r.rank(), r.host(), r.gpu(), r.gpuUuid(), t, s));
  }
}
