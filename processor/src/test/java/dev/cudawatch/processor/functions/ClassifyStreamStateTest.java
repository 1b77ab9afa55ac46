package dev.cudawatch.processor.functions;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.diagnosis.engine.StreamState;
import dev.cudawatch.processor.config.ProcessorSettings;
import dev.cudawatch.processor.records.IncidentCodec;
import dev.cudawatch.processor.records.KryoFree;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;

/**
 * The classifier's keyed state goes through its own versioned serializer, never Kryo: with generic
 * types disabled (as {@code pipeline.generic-types: false} does) it checkpoints and restores.
 */
class ClassifyStreamStateTest {
  private static final String[] TRACEBACK = {
    "Traceback (most recent call last):",
    "  File \"/home/ana/train.py\", line 88, in <module>",
    "    out = model(batch)",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total"
        + " capacity of 79.10 GiB of which 1.00 GiB is free.",
  };

  private static KeyedOneInputStreamOperatorTestHarness<String, LogRecord, Incident> harness()
      throws Exception {
    var h =
        new KeyedOneInputStreamOperatorTestHarness<>(
            new KeyedProcessOperator<>(new ClassifyStream(Map.of(), ProcessorSettings.defaults())),
            LogRecord::streamKey,
            Types.STRING);
    return KryoFree.harness(h, IncidentCodec.TYPE.serializer());
  }

  @Test
  void withoutGenericTypesTheStateOfAnOpenIncidentSurvivesARestore() throws Exception {
    OperatorSubtaskState snapshot;
    try (var h = harness()) {
      h.open();
      h.setProcessingTime(0);
      for (int i = 0; i < TRACEBACK.length; i++) {
        h.processElement(Records.line("/logs/a.log", i * 100L, TRACEBACK[i]), i);
      }
      assertTrue(h.extractOutputValues().isEmpty(), "the incident is still open");
      snapshot = h.snapshot(1, 10);
    }
    try (var h = harness()) {
      h.initializeState(snapshot);
      h.open();
      h.setProcessingTime(5000);
      List<Incident> out = h.extractOutputValues();
      assertEquals(1, out.size(), "the restored open incident is emitted when the stream is quiet");
      Incident i = out.get(0);
      assertEquals("cuda_oom", i.incidentClass());
      assertEquals("/home/ana/train.py:88", i.fields().get("user_frame"));
      assertEquals(2L << 30, i.fields().get("tried_to_allocate_bytes"));
      assertEquals(4, i.line());
    }
  }

  @Test
  void theStateClassAloneWouldNeedKryo() {
    // what the descriptor used before: a generic type, refused once generic types are off
    SerializerConfigImpl noGenerics = new SerializerConfigImpl();
    noGenerics.setGenericTypes(false);
    assertThrows(
        UnsupportedOperationException.class,
        () -> TypeInformation.of(StreamState.class).createSerializer(noGenerics));
  }
}
