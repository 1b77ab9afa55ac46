package dev.cudawatch.processor.records;

import dev.cudawatch.diagnosis.engine.StreamState;
import dev.cudawatch.diagnosis.engine.StreamStateCodec;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.base.TypeSerializerSingleton;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * The classifier's keyed state in checkpoints and savepoints: {@link StreamStateCodec}'s versioned
 * format, not Kryo, so the state classes may change without breaking a restore.
 */
public final class StreamStateSerializer extends TypeSerializerSingleton<StreamState> {
  private static final long serialVersionUID = 1L;
  public static final StreamStateSerializer INSTANCE = new StreamStateSerializer();

  @Override
  public boolean isImmutableType() {
    return false;
  }

  @Override
  public StreamState createInstance() {
    return new StreamState();
  }

  @Override
  public StreamState copy(StreamState from) {
    try {
      ByteArrayOutputStream buf = new ByteArrayOutputStream();
      StreamStateCodec.write(from, new DataOutputStream(buf));
      return StreamStateCodec.read(
          new DataInputStream(new ByteArrayInputStream(buf.toByteArray())));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public StreamState copy(StreamState from, StreamState reuse) {
    return copy(from);
  }

  @Override
  public int getLength() {
    return -1;
  }

  @Override
  public void serialize(StreamState record, DataOutputView target) throws IOException {
    StreamStateCodec.write(record, target);
  }

  @Override
  public StreamState deserialize(DataInputView source) throws IOException {
    return StreamStateCodec.read(source);
  }

  @Override
  public StreamState deserialize(StreamState reuse, DataInputView source) throws IOException {
    return deserialize(source);
  }

  @Override
  public void copy(DataInputView source, DataOutputView target) throws IOException {
    serialize(deserialize(source), target);
  }

  @Override
  public TypeSerializerSnapshot<StreamState> snapshotConfiguration() {
    return new Snapshot();
  }

  /** Restores this serializer; the codec's own version byte handles format changes. */
  public static final class Snapshot extends SimpleTypeSerializerSnapshot<StreamState> {
    public Snapshot() {
      super(() -> INSTANCE);
    }
  }
}
