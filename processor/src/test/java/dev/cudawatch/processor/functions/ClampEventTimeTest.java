package dev.cudawatch.processor.functions;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.cudawatch.common.wire.LogRecord;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;
import org.junit.jupiter.api.Test;

/**
 * Event times past a record's ingest time (its Kafka timestamp, never later than the job's clock)
 * plus the skew are clamped to that bound; earlier ones are left alone. The job's clock is the
 * harness's processing time, so nothing here reads the machine's.
 */
class ClampEventTimeTest {
  private static final Instant NOW = Instant.parse("2026-11-22T03:00:00Z");
  private static final long SKEW = 10_000;

  private static List<Instant> clamp(Instant eventTime, Long kafkaTime) throws Exception {
    try (OneInputStreamOperatorTestHarness<LogRecord, LogRecord> h =
        ProcessFunctionTestHarnesses.forProcessFunction(new ClampEventTime(SKEW))) {
      h.setProcessingTime(NOW.toEpochMilli());
      LogRecord r =
          LogRecord.builder()
              .host("n")
              .source("/logs/a.log")
              .eventTime(eventTime)
              .text("x")
              .build();
      if (kafkaTime == null) {
        h.processElement(new StreamRecord<>(r)); // no timestamp: the job's clock stands in
      } else {
        h.processElement(r, kafkaTime);
      }
      return h.extractOutputValues().stream().map(LogRecord::eventTime).toList();
    }
  }

  @Test
  void aLineAYearAheadOfItsKafkaTimeIsClampedToItPlusTheSkew() throws Exception {
    Instant kafka = NOW.minusSeconds(60);
    assertEquals(
        List.of(kafka.plusMillis(SKEW)),
        clamp(kafka.plus(Duration.ofDays(365)), kafka.toEpochMilli()));
  }

  @Test
  void aProducerClockAheadIsBoundedByTheJobsClock() throws Exception {
    Instant ahead = NOW.plus(Duration.ofMinutes(59)); // what a broker still accepts
    assertEquals(List.of(NOW.plusMillis(SKEW)), clamp(ahead, ahead.toEpochMilli()));
  }

  @Test
  void withoutAKafkaTimeTheJobsClockIsTheIngestTime() throws Exception {
    assertEquals(List.of(NOW.plusMillis(SKEW)), clamp(NOW.plus(Duration.ofDays(365)), null));
  }

  @Test
  void timesWithinTheSkewAndTimesBehindAreKept() throws Exception {
    Instant kafka = NOW.minusSeconds(60);
    Instant slightlyAhead = kafka.plusMillis(SKEW - 1);
    assertEquals(List.of(slightlyAhead), clamp(slightlyAhead, kafka.toEpochMilli()));
    // spooled through an outage, a backlog, a clock behind: old is not wrong, only late
    Instant yearBehind = kafka.minus(Duration.ofDays(365));
    assertEquals(List.of(yearBehind), clamp(yearBehind, kafka.toEpochMilli()));
  }
}
