package dev.cudawatch.processor.records;

import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.streaming.util.AbstractStreamOperatorTestHarness;

/** Harnesses as the job runs: generic types off, output through the operator's own serializer. */
public final class KryoFree {
  private KryoFree() {}

  /** Sets {@code h} up (before {@code open}/{@code initializeState}) to refuse any Kryo type. */
  public static <OUT, H extends AbstractStreamOperatorTestHarness<OUT>> H harness(
      H h, TypeSerializer<OUT> output) {
    ((SerializerConfigImpl) h.getExecutionConfig().getSerializerConfig()).setGenericTypes(false);
    h.setup(output);
    return h;
  }
}
