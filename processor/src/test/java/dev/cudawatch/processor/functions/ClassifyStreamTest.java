package dev.cudawatch.processor.functions;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.processor.config.ProcessorSettings;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ClassifyStreamTest {
  private KeyedOneInputStreamOperatorTestHarness<String, LogRecord, Incident> h;

  @BeforeEach
  void setUp() throws Exception {
    h =
        ProcessFunctionTestHarnesses.forKeyedProcessFunction(
            new ClassifyStream(Map.of(), ProcessorSettings.defaults()),
            LogRecord::streamKey,
            Types.STRING);
    h.open();
  }

  @AfterEach
  void tearDown() throws Exception {
    h.close();
  }

  @Test
  void aTracebackBecomesOneIncidentWhenTheStreamGoesQuiet() throws Exception {
    String[] lines = {
      "Traceback (most recent call last):",
      "  File \"/tmp/capture/cases/oom_single.py\", line 3, in <module>",
      "    x = torch.empty(int(200 * 2**30), dtype=torch.uint8, device=\"cuda\")",
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 200.00 GiB. GPU 0 has a total capacity of 139.80 GiB of which 139.29 GiB is free.",
    };
    h.setProcessingTime(0);
    for (int i = 0; i < lines.length; i++) {
      h.processElement(Records.line("/logs/a.log", i * 100L, lines[i]), i);
    }
    assertTrue(h.extractOutputValues().isEmpty(), "still open until the stream is quiet");
    assertEquals(2, h.numProcessingTimeTimers(), "the flush timer and the expiry check");
    h.setProcessingTime(1200);
    List<Incident> out = h.extractOutputValues();
    assertEquals(1, out.size());
    Incident i = out.get(0);
    assertEquals("cuda_oom", i.incidentClass());
    assertEquals("gpu-node-1", i.host());
    assertEquals("job-42", i.job());
    assertEquals("/tmp/capture/cases/oom_single.py:3", i.fields().get("user_frame"));
    assertEquals(1, h.numProcessingTimeTimers(), "no timer left behind but the expiry check");
  }

  @Test
  void theAgentsQuietMarkerClosesTheTracebackWithoutWaitingForTheTimer() throws Exception {
    String[] lines = {
      "Traceback (most recent call last):",
      "  File \"/home/u/train.py\", line 88, in <module>",
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.05 GiB is free.",
    };
    h.setProcessingTime(0);
    long offset = 0;
    for (String line : lines) {
      h.processElement(Records.line("/logs/q.log", offset, line), offset);
      offset += line.length() + 1;
    }
    h.processElement(Records.quiet("/logs/q.log", offset), offset);
    List<Incident> out = h.extractOutputValues();
    assertEquals(1, out.size(), "emitted on the marker, at the same processing time");
    assertEquals("cuda_oom", out.get(0).incidentClass());
    assertEquals("job-42", out.get(0).job(), "the lines' job, not the marker's (none)");
    assertEquals("/home/u/train.py:88", out.get(0).fields().get("user_frame"));

    // the next line starts where the marker pointed: a line, not a duplicate
    h.processElement(
        Records.line("/logs/q.log", offset, "RuntimeError: CUDA error: misaligned address"), 9);
    h.setProcessingTime(5000);
    assertEquals(2, h.extractOutputValues().size(), "the line after the marker is classified");
    assertEquals(
        1, h.numProcessingTimeTimers(), "the fallback timers fired on an idle stream: its expiry");
  }

  @Test
  void aMarkerANewerLineOvertookClosesNothing() throws Exception {
    h.setProcessingTime(0);
    String line = "RuntimeError: CUDA error: an illegal memory access was encountered";
    h.processElement(Records.line("/logs/r.log", 0, line), 1);
    h.processElement(Records.line("/logs/r.log", line.length() + 1, line), 2);
    h.processElement(Records.quiet("/logs/r.log", line.length() + 1), 3); // sent before line 2
    assertTrue(h.extractOutputValues().isEmpty(), "the block went on after that marker");
    h.setProcessingTime(5000);
    List<Incident> out = h.extractOutputValues();
    assertEquals(1, out.size(), "closed by the timer, as one incident");
    assertEquals(2, out.get(0).count());
    assertEquals(1, h.numProcessingTimeTimers(), "the expiry check");
  }

  @Test
  void aMarkerOnAStreamWithNothingOpenLeavesNoState() throws Exception {
    h.setProcessingTime(0);
    h.processElement(Records.quiet("/logs/s.log", 120), 1);
    assertTrue(h.extractOutputValues().isEmpty());
    assertEquals(0, h.numKeyedStateEntries(), "a marker stores nothing");
    assertEquals(0, h.numProcessingTimeTimers());
  }

  @Test
  void aResentRecordIsDroppedNotCountedTwice() throws Exception {
    h.setProcessingTime(0);
    LogRecord r = Records.line("/logs/b.log", 10, "RuntimeError: CUDA error: misaligned address");
    h.processElement(r, 1);
    h.processElement(r, 2);
    h.setProcessingTime(5000);
    List<Incident> out = h.extractOutputValues();
    assertEquals(1, out.size());
    assertEquals(1, out.get(0).count());
  }

  @Test
  void streamsAreIndependent() throws Exception {
    h.setProcessingTime(0);
    h.processElement(
        Records.line("/logs/a.log", 1, "RuntimeError: CUDA error: misaligned address"), 1);
    h.processElement(
        Records.line(
            "/logs/b.log",
            1,
            "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm`"),
        2);
    h.setProcessingTime(5000);
    List<Incident> out = h.extractOutputValues();
    assertEquals(2, out.size());
    assertTrue(
        out.stream().allMatch(Incident::root), "a failure in another file is not a consequence");
    assertEquals(2, h.numProcessingTimeTimers(), "each stream's expiry check");
  }

  @Test
  void aStreamSilentForTheStateTtlLeavesNoStateAndNoTimer() throws Exception {
    long hour = 3_600_000L;
    long ttl = ProcessorSettings.defaults().stateTtlHours() * hour;
    h.setStateTtlProcessingTime(0);
    h.setProcessingTime(0);
    h.processElement(Records.line("/logs/t.log", 0, "epoch 1 step 10 loss 0.5"), 1);
    h.processElement(Records.line("/logs/u.log", 0, "epoch 1 step 10 loss 0.5"), 2);
    assertTrue(h.numKeyedStateEntries() > 0);
    // t.log writes on half a TTL later; u.log stays silent (TTL's clock first: timers read state)
    h.setStateTtlProcessingTime(ttl / 2);
    h.setProcessingTime(ttl / 2);
    h.processElement(Records.line("/logs/t.log", 100, "epoch 1 step 20 loss 0.4"), 3);
    h.setStateTtlProcessingTime(ttl + hour);
    h.setProcessingTime(ttl + hour);
    long tEntries = h.numKeyedStateEntries();
    assertTrue(tEntries > 0, "t.log was written to within the TTL: kept");
    assertEquals(1, h.numProcessingTimeTimers(), "t.log's next expiry check; u.log's chain ended");
    h.setStateTtlProcessingTime(2 * ttl + 2 * hour);
    h.setProcessingTime(2 * ttl + 2 * hour);
    assertEquals(0, h.numKeyedStateEntries(), "both silent for a TTL: nothing left");
    assertEquals(0, h.numProcessingTimeTimers());
  }
}
