package dev.cudawatch.processor.functions;

import dev.cudawatch.common.wire.DeadLetter;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.WireFormatException;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.processor.records.RawRecord;
import java.time.Instant;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/** Parses log records; what cannot be read goes to the dead-letter output with its reason. */
public final class ParseLogRecords extends ProcessFunction<RawRecord, LogRecord> {
  private static final long serialVersionUID = 1L;

  public static final OutputTag<DeadLetter> DEAD_LETTERS = new OutputTag<>("dead-letters") {};

  private transient Counter deadLetters;

  @Override
  public void open(OpenContext ctx) {
    deadLetters = getRuntimeContext().getMetricGroup().counter("cudawatch_dead_letters");
  }

  @Override
  public void processElement(RawRecord raw, Context ctx, Collector<LogRecord> out) {
    try {
      out.collect(WireJson.readLogRecord(raw.value));
    } catch (WireFormatException e) {
      if (deadLetters != null) {
        deadLetters.inc();
      }
      long ts = ctx.timerService().currentProcessingTime();
      ctx.output(
          DEAD_LETTERS,
          DeadLetter.of(
              "processor",
              raw.topic + "/" + raw.partition + "@" + raw.offset,
              e.getMessage(),
              raw.value,
              Instant.ofEpochMilli(ts)));
    }
  }
}
