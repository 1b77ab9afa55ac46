package dev.cudawatch.diagnosis.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.diagnosis.catalog.Catalog;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class StreamStateCodecTest {
  private static final Catalog CATALOG = Catalog.builtIn();
  private static final Instant T0 = Instant.parse("2026-11-22T03:00:00Z");

  private static byte[] encode(StreamState s) throws IOException {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    StreamStateCodec.write(s, new DataOutputStream(buf));
    return buf.toByteArray();
  }

  private static StreamState decode(byte[] b) throws IOException {
    return StreamStateCodec.read(new DataInputStream(new ByteArrayInputStream(b)));
  }

  private static StreamClassifier classifier(StreamState s) {
    return new StreamClassifier(
        CATALOG,
        new Advisor(CATALOG.taxonomy()),
        new StreamContext("node-1", "job-7", "/logs/r0.log"),
        ClassifierSettings.defaults(),
        s);
  }

  @Test
  void aStateWithOpenIncidentsRoundTripsAndClassifiesOnAsBefore() throws IOException {
    StreamState state = new StreamState();
    StreamClassifier c = classifier(state);
    c.accept("Traceback (most recent call last):", null, T0);
    c.accept("  File \"/home/ana/train.py\", line 88, in <module>", null, T0);
    c.accept(
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total"
            + " capacity of 79.10 GiB of which 1.00 GiB is free.",
        null,
        T0);
    c.accept("RuntimeError: CUDA error: an illegal memory access was encountered", null, T0);
    assertEquals(2, state.open.size());

    byte[] bytes = encode(state);
    StreamState restored = decode(bytes);
    assertArrayEquals(bytes, encode(restored), "nothing lost or changed");

    List<Incident> fromOriginal = classifier(state).flush(T0);
    List<Incident> fromRestored = classifier(restored).flush(T0);
    assertEquals(fromOriginal, fromRestored);
    assertEquals(2, fromRestored.size());
    assertTrue(fromRestored.get(1).explanation().startsWith("A consequence"), "the episode too");
  }

  @Test
  void aNewerFormatIsRefusedWithItsVersion() {
    IOException e =
        assertThrows(
            IOException.class, () -> decode(new byte[] {(byte) (StreamStateCodec.VERSION + 1)}));
    assertTrue(
        e.getMessage().contains("format version " + (StreamStateCodec.VERSION + 1)),
        e.getMessage());
  }
}
