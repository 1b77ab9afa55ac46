package dev.cudawatch.processor.formats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.wire.DeadLetter;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.processor.config.ProcessorSettings;
import dev.cudawatch.processor.formats.ShipperShapes.Line;
import dev.cudawatch.processor.formats.ShipperShapes.Shape;
import dev.cudawatch.processor.functions.ClassifyStream;
import dev.cudawatch.processor.functions.ParseLogRecords;
import dev.cudawatch.processor.records.RawRecord;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The same real failure (an illegal memory access captured on an H200, traceback and all) shipped
 * by each shipper, interleaved with another rank's healthy output, yields the same incident: class,
 * fields, host, job and rank. Each traceback line is its own Kafka record (OTLP: three lines a
 * batch), so the user frame two records before the error proves the stream regrouped.
 */
class ShipperFormatsTest {
  private static final Path GOLDEN = Path.of("../diagnosis/src/test/resources/golden");
  private static final Instant T0 = Instant.parse("2026-11-22T03:00:00.250Z");

  @ParameterizedTest
  @EnumSource(Shape.class)
  void theRealFailureBecomesTheSameIncidentInEveryFormat(Shape shape) throws Exception {
    List<byte[]> failing = shape.records(lines("illegal_address_torch.log", "rank-3"));
    List<byte[]> healthy = shape.records(lines("healthy_training.log", "rank-5"));
    List<byte[]> interleaved = new ArrayList<>();
    for (int i = 0; i < Math.max(failing.size(), healthy.size()); i++) {
      if (i < healthy.size()) {
        interleaved.add(healthy.get(i));
      }
      if (i < failing.size()) {
        interleaved.add(failing.get(i));
      }
    }
    String topic = "logs." + shape.name().toLowerCase();
    List<LogRecord> records = new ArrayList<>();
    try (OneInputStreamOperatorTestHarness<RawRecord, LogRecord> parse =
        ProcessFunctionTestHarnesses.forProcessFunction(
            new ParseLogRecords(
                List.of(new InputSettings(topic, shape.format, ShipperShapes.JOB_PATTERN))))) {
      long offset = 100;
      for (byte[] v : interleaved) {
        parse.processElement(new RawRecord(topic, 0, offset++, v), 0);
      }
      assertEquals(List.of(), deadLetters(parse), shape + ": nothing dead-lettered");
      records.addAll(parse.extractOutputValues());
    }
    List<Incident> incidents = classify(records);
    List<Incident> failures =
        incidents.stream().filter(i -> "illegal_memory_access".equals(i.incidentClass())).toList();
    assertEquals(1, failures.size(), shape + ": one incident, got " + incidents);
    Incident i = failures.get(0);
    assertTrue(i.root(), shape + ": the stream's root");
    assertEquals(ShipperShapes.HOST, i.host(), shape + ": host");
    assertEquals(ShipperShapes.JOB, i.job(), shape + ": job");
    assertEquals((long) ShipperShapes.RANK, i.fields().get("rank"), shape + ": rank");
    assertEquals("cudaErrorIllegalAddress", i.fields().get("cuda_error_name"), shape + "");
    assertEquals(700L, ((Number) i.fields().get("cuda_error_code")).longValue(), shape + "");
    assertEquals("torch.AcceleratorError", i.fields().get("exception_type"), shape + "");
    assertEquals(
        "/tmp/capture/cases/illegal_triton2.py:13",
        i.fields().get("user_frame"),
        shape + ": the traceback's frame, records before the error, regrouped");
    assertEquals(T0.plusMillis(4), i.eventTime(), shape + ": the error line's event time");
    assertEquals(
        List.of(),
        incidents.stream().filter(x -> !x.incidentClass().equals("illegal_memory_access")).toList(),
        shape + ": the healthy rank stays quiet");
  }

  @ParameterizedTest
  @EnumSource(Shape.class)
  void unknownShapesAreDeadLetteredWholeWithAReason(Shape shape) throws Exception {
    String topic = "logs." + shape.name().toLowerCase();
    // another shipper's record (or a batch that is part wrong) on this format's topic
    byte[] other =
        shape == Shape.OTLP_JSON || shape == Shape.OTLP_PROTO
            ? "{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"body\":{\"stringValue\":\"x\"}},{\"body\":{}}]}]}]}"
                .getBytes(StandardCharsets.UTF_8)
            : "{\"kind\":\"something else\"}".getBytes(StandardCharsets.UTF_8);
    try (OneInputStreamOperatorTestHarness<RawRecord, LogRecord> parse =
        ProcessFunctionTestHarnesses.forProcessFunction(
            new ParseLogRecords(List.of(new InputSettings(topic, shape.format, null))))) {
      parse.processElement(new RawRecord(topic, 2, 77, other), 0);
      assertEquals(List.of(), parse.extractOutputValues(), shape + ": nothing half-read");
      List<DeadLetter> dead = deadLetters(parse);
      assertEquals(1, dead.size(), shape + "");
      assertEquals(topic + "/2@77", dead.get(0).topic());
      assertTrue(!dead.get(0).reason().isBlank(), shape + ": a reason");
    }
  }

  @org.junit.jupiter.api.Test
  void reSentLinesAreDroppedAndARotatedFileStartsOver() throws Exception {
    // rsyslog's file + offset: no file instance, so a rotated file restarts at 0 under its name
    RsyslogFormat f = new RsyslogFormat(new Attribution(ShipperShapes.JOB_PATTERN, null));
    List<Line> failing = lines("illegal_address_torch.log", "rank-3");
    List<List<Line>> parts = List.of(failing, failing.subList(1, 6), failing);
    try (KeyedOneInputStreamOperatorTestHarness<String, LogRecord, Incident> h =
        ProcessFunctionTestHarnesses.forKeyedProcessFunction(
            new ClassifyStream(Map.of(), ProcessorSettings.defaults()),
            LogRecord::streamKey,
            Types.STRING)) {
      h.open();
      long k = 0;
      long now = 0;
      for (List<Line> part : parts) {
        for (byte[] v : Shape.RSYSLOG.records(part)) {
          for (LogRecord r : f.parse(new RawRecord("t", 0, k++, v))) {
            h.processElement(r, 0);
          }
        }
        now += 5_000;
        h.setProcessingTime(now); // the stream goes quiet: what it has is emitted
      }
      List<Incident> incidents = h.extractOutputValues();
      assertEquals(
          2,
          incidents.size(),
          "the failure once, the re-sent lines (offsets 1..5) dropped, the rotated file's failure: "
              + incidents);
      assertTrue(
          incidents.stream().allMatch(i -> i.incidentClass().equals("illegal_memory_access")));
    }
  }

  /** A file's lines as written: byte offsets, one millisecond apart. */
  static List<Line> lines(String file, String stream) throws Exception {
    List<Line> out = new ArrayList<>();
    long offset = 0;
    int n = 0;
    for (String l : Files.readAllLines(GOLDEN.resolve(file), StandardCharsets.UTF_8)) {
      out.add(new Line(null, stream, offset, T0.plusMillis(n++), l));
      offset += l.getBytes(StandardCharsets.UTF_8).length + 1;
    }
    return out;
  }

  static List<Incident> classify(List<LogRecord> records) throws Exception {
    try (KeyedOneInputStreamOperatorTestHarness<String, LogRecord, Incident> h =
        ProcessFunctionTestHarnesses.forKeyedProcessFunction(
            new ClassifyStream(Map.of(), ProcessorSettings.defaults()),
            LogRecord::streamKey,
            Types.STRING)) {
      h.open();
      h.setProcessingTime(0);
      for (LogRecord r : records) {
        h.processElement(r, 0);
      }
      h.setProcessingTime(5_000);
      return h.extractOutputValues();
    }
  }

  static List<DeadLetter> deadLetters(OneInputStreamOperatorTestHarness<RawRecord, LogRecord> h) {
    var side = h.getSideOutput(ParseLogRecords.DEAD_LETTERS);
    return side == null ? List.of() : side.stream().map(StreamRecord::getValue).toList();
  }
}
