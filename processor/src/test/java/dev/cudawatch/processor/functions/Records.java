package dev.cudawatch.processor.functions;

import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import java.time.Instant;

/** Fixed fixtures for operator tests, as flink-training's TestBase does. */
final class Records {
  static final Instant T0 = Instant.parse("2026-11-22T03:00:00Z");

  private Records() {}

  static LogRecord line(String source, long offset, String text) {
    return LogRecord.builder().host("gpu-node-1").job("job-42").source(source).stream("stderr")
        .offset(offset)
        .eventTime(T0.plusMillis(offset))
        .text(text)
        .build();
  }

  static LogRecord memory(long offset, String csvRow) {
    return LogRecord.builder()
        .host("gpu-node-1")
        .kind(RecordKind.GPU_MEMORY)
        .source("nvidia-smi")
        .stream("nvidia-smi")
        .offset(offset)
        .eventTime(T0.plusMillis(offset))
        .text(csvRow)
        .build();
  }
}
