package dev.cudawatch.processor.rules;

import static dev.cudawatch.common.io.CodecIo.readString;
import static dev.cudawatch.common.io.CodecIo.readStringMap;
import static dev.cudawatch.common.io.CodecIo.writeString;
import static dev.cudawatch.common.io.CodecIo.writeStringMap;

import dev.cudawatch.processor.records.Codec;
import dev.cudawatch.processor.records.CodecTypeInfo;
import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;

/** An incident as a count or spike rule sees it, between matching and the rule. */
public final class RuleEventCodec implements Codec<RuleEvent> {
  private static final long serialVersionUID = 1L;
  public static final CodecTypeInfo<RuleEvent> TYPE =
      new CodecTypeInfo<>(RuleEvent.class, new RuleEventCodec());

  @Override
  public int version() {
    return 1;
  }

  @Override
  public void write(RuleEvent e, DataOutput out) throws IOException {
    writeString(e.rule(), out);
    writeString(e.type(), out);
    writeString(e.key(), out);
    writeStringMap(e.labels(), out);
    writeString(e.incidentId(), out);
    out.writeLong(e.eventTime());
    writeString(e.distinctValue(), out);
    writeString(e.unknown(), out);
  }

  @Override
  public RuleEvent read(int version, DataInput in) throws IOException {
    return new RuleEvent(
        readString(in),
        readString(in),
        readString(in),
        readStringMap(in),
        readString(in),
        in.readLong(),
        readString(in),
        readString(in));
  }
}
