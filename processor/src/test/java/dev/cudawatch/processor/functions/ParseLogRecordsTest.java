package dev.cudawatch.processor.functions;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.wire.DeadLetter;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.processor.records.RawRecord;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;
import org.junit.jupiter.api.Test;

class ParseLogRecordsTest {
  @Test
  void badRecordsBecomeDeadLettersWithTheirReason() throws Exception {
    try (OneInputStreamOperatorTestHarness<RawRecord, LogRecord> h =
        ProcessFunctionTestHarnesses.forProcessFunction(new ParseLogRecords())) {
      LogRecord ok = Records.line("/l", 0, "hello");
      h.processElement(new RawRecord("cudawatch.logs", 0, 1, WireJson.toBytes(ok)), 0);
      h.processElement(
          new RawRecord("cudawatch.logs", 0, 2, "not json".getBytes(StandardCharsets.UTF_8)), 0);
      String newer = WireJson.toJson(ok).replace("\"v\":1", "\"v\":9");
      h.processElement(
          new RawRecord("cudawatch.logs", 0, 3, newer.getBytes(StandardCharsets.UTF_8)), 0);
      assertEquals(List.of(ok), h.extractOutputValues());
      List<DeadLetter> dead =
          h.getSideOutput(ParseLogRecords.DEAD_LETTERS).stream()
              .map(StreamRecord::getValue)
              .toList();
      assertEquals(2, dead.size());
      assertTrue(dead.get(0).reason().startsWith("not JSON"), dead.get(0).reason());
      assertTrue(
          dead.get(1).reason().contains("unsupported LogRecord version 9"), dead.get(1).reason());
      assertEquals("cudawatch.logs/0@3", dead.get(1).topic());
    }
  }
}
