package dev.cudawatch.diagnosis.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.diagnosis.advice.Advisor;
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
  void aPreambleAndAnOpenDiffHunkRoundTrip() throws IOException {
    StreamState state = new StreamState();
    StreamClassifier c = classifier(state);
    c.accept("node-1:123:123 [0] NCCL INFO NCCL version 2.18.3+cuda12.1", null, T0);
    c.accept("RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1269, internal error", null, T0);
    c.accept("@@ -10,4 +10,6 @@ def train():", null, T0);
    assertNotNull(state.preamble, "the NCCL version line waits for an incident");
    assertEquals(1, state.open.size());
    assertNotNull(state.open.get(0).preamble, "the NCCL error took the preamble");
    assertTrue(state.inDiffHunk);

    byte[] bytes = encode(state);
    StreamState restored = decode(bytes);
    assertArrayEquals(bytes, encode(restored), "nothing lost or changed");
    assertEquals(state.preamble, restored.preamble);
    assertEquals(state.preambleFor, restored.preambleFor);
    assertEquals(state.preambleLine, restored.preambleLine);
    assertEquals(state.open.get(0).preamble, restored.open.get(0).preamble);
    assertTrue(restored.inDiffHunk, "the diff hunk is still open");
    assertEquals(classifier(state).flush(T0), classifier(restored).flush(T0));
  }

  @Test
  void aVersion1StateStillReads() throws IOException {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    DataOutputStream out = new DataOutputStream(buf);
    out.writeByte(1);
    out.writeLong(42); // lineNo
    out.writeInt(0); // open incidents
    out.writeInt(-1); // rootId
    out.writeInt(-1); // rootClass
    out.writeLong(7); // lastFailureLine
    out.writeInt(-1); // userFrame
    out.writeLong(3); // tracebackLine
    out.writeLong(2); // droppedConsequences
    out.writeBoolean(false); // context

    StreamState s = decode(buf.toByteArray());
    assertEquals(42, s.lineNo);
    assertEquals(2, s.droppedConsequences());
    assertNull(s.preamble);
    assertFalse(s.inDiffHunk);
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
