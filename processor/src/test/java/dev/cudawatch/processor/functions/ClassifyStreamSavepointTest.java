package dev.cudawatch.processor.functions;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.processor.config.ProcessorSettings;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.OperatorSnapshotUtil;
import org.junit.jupiter.api.Test;

/**
 * The classifier's keyed state written by commit f5730f6, before issue 35 changed its TTL cleanup
 * (from cleanup on every access to cleanup in full snapshots plus an expiry check per stream),
 * restores into today's operator: an open traceback goes on across the upgrade.
 *
 * <p>{@code savepoints/classify-stream-f5730f6.snapshot} was written by f5730f6's ClassifyStream in
 * this harness ({@code OperatorSnapshotUtil.writeStateHandle}, default settings): the two lines of
 * {@link #BEFORE} on {@code /logs/a.log} at processing time 0, snapshot 1 at 50 ms.
 */
class ClassifyStreamSavepointTest {
  static final String[] BEFORE = {
    "Traceback (most recent call last):", "  File \"/home/u/train.py\", line 88, in <module>",
  };

  @Test
  void anOpenTracebackGoesOnAcrossTheUpgrade() throws Exception {
    KeyedOneInputStreamOperatorTestHarness<String, LogRecord, Incident> h =
        new KeyedOneInputStreamOperatorTestHarness<>(
            new KeyedProcessOperator<>(new ClassifyStream(Map.of(), ProcessorSettings.defaults())),
            LogRecord::streamKey,
            Types.STRING);
    h.setup();
    h.initializeState(
        OperatorSnapshotUtil.readStateHandle(
            getClass().getResource("/savepoints/classify-stream-f5730f6.snapshot").getPath()));
    h.open();
    assertEquals(3, h.numKeyedStateEntries(), "the stream's block, offset and start restored");
    h.setProcessingTime(60);

    // a re-send of the last line read (the agent's rewind after the restart) is a duplicate
    long second = BEFORE[0].length() + 1;
    h.processElement(Records.line("/logs/a.log", second, BEFORE[1]), 60);
    long next = second + BEFORE[1].length() + 1;
    h.processElement(
        Records.line(
            "/logs/a.log",
            next,
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a"
                + " total capacity of 79.15 GiB of which 1.05 GiB is free."),
        61);
    h.setProcessingTime(10_000);

    List<Incident> out = h.extractOutputValues();
    assertEquals(1, out.size(), "one incident: the restored lines and the new one");
    assertEquals("cuda_oom", out.get(0).incidentClass());
    assertEquals(
        "/home/u/train.py:88",
        out.get(0).fields().get("user_frame"),
        "the frame came from the lines read before the upgrade");
    assertEquals(3, out.get(0).line(), "the error is the stream's third line: no line twice");
    h.close();
  }
}
