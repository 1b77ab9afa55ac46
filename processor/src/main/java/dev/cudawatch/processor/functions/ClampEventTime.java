package dev.cudawatch.processor.functions;

import dev.cudawatch.common.wire.LogRecord;
import java.time.Instant;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Bounds each record's event time by its ingest time plus {@code maxSkew}, and counts the records
 * it moves ({@code cudawatch_clamped_event_times}).
 *
 * <p>Why a clamp and not per-source watermarks: the watermark follows the highest incident time, so
 * only a time in the future can move it for everyone; a line cannot be shipped before it is
 * written, so a time past its ingest time is a wrong clock, and clamping it needs no state and no
 * idleness guess. Per-host watermarks would instead let a node a year behind hold time back for all
 * until it goes idle. A time in the past is left alone: spooled lines after an outage, a backlog
 * and a replay are legitimately old, and an old time only makes that node's own incidents late for
 * its rules' windows; it cannot move the watermark.
 *
 * <p>Ingest time is the Kafka record's timestamp (the source sets it as the element's timestamp),
 * but never later than this job's clock: a producer on the node with the wrong clock stamps
 * CreateTime with that clock too. Without a timestamp the job's clock stands in.
 */
public final class ClampEventTime extends ProcessFunction<LogRecord, LogRecord> {
  private static final long serialVersionUID = 1L;

  private final long maxSkewMs;
  private transient Counter clamped;

  public ClampEventTime(long maxSkewMs) {
    this.maxSkewMs = maxSkewMs;
  }

  @Override
  public void open(OpenContext ctx) {
    clamped = getRuntimeContext().getMetricGroup().counter("cudawatch_clamped_event_times");
  }

  @Override
  public void processElement(LogRecord r, Context ctx, Collector<LogRecord> out) {
    long now = ctx.timerService().currentProcessingTime();
    Long ts = ctx.timestamp();
    long latest = bound(ts, now, maxSkewMs);
    if (r.eventTime().toEpochMilli() > latest) {
      clamped.inc();
      out.collect(r.withEventTime(Instant.ofEpochMilli(latest)));
    } else {
      out.collect(r);
    }
  }

  /**
   * The latest believable event time of a record read at {@code now} with Kafka time {@code ts}.
   */
  static long bound(Long ts, long now, long maxSkewMs) {
    long ingest = ts == null || ts <= 0 ? now : Math.min(ts, now);
    return ingest > Long.MAX_VALUE - maxSkewMs ? Long.MAX_VALUE : ingest + maxSkewMs;
  }
}
