package dev.cudawatch.processor.functions;

import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import java.time.Instant;
import java.util.List;
import java.util.Map;

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

  /** The agent's marker that {@code source} wrote nothing after {@code end} (no job named). */
  static LogRecord quiet(String source, long end) {
    return LogRecord.builder().host("gpu-node-1").source(source).stream("stderr")
        .eventTime(T0)
        .text("")
        .build()
        .quietAt(end, T0.plusMillis(end));
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

  static LogRecord memory(long offset, String job, String csvRow) {
    return LogRecord.builder()
        .host("gpu-node-1")
        .job(job)
        .rank(0)
        .kind(RecordKind.GPU_MEMORY)
        .source("nvidia-smi")
        .stream("nvidia-smi")
        .offset(offset)
        .eventTime(T0.plusMillis(offset))
        .text(csvRow)
        .build();
  }

  static Incident incident(String id, String cls, String host, Map<String, Object> fields, long t) {
    Instant at = Instant.ofEpochMilli(t);
    return Incident.builder(id, cls)
        .severity("error")
        .suspect("application")
        .signature("s")
        .fields(fields)
        .summary("s")
        .explanation("e")
        .nextSteps(List.of("the catalog's step"))
        .host(host)
        .job("job")
        .source("/l")
        .line(1)
        .firstRecordId("rec-" + id)
        .eventTime(at)
        .detectedTime(at)
        .excerpt(List.of())
        .build();
  }
}
