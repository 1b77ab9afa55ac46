package dev.cudawatch.ingest.framing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Container log lines as containerd and CRI-O write them under /var/log/pods: {@code <RFC3339Nano
 * time> <stdout|stderr> <P|F> <content>}, the format of the kubelet's CRI logging design
 * (kubernetes/design-proposals-archive, node/kubelet-cri-logging.md) that Fluent Bit's {@code cri}
 * parser reads with {@code ^(?<time>[^ ]+) (?<stream>stdout|stderr) (?<logtag>[^ ]*)
 * (?<message>.*)$} (fluent/fluent-bit conf/parsers.conf); {@code P} marks a fragment of a line the
 * runtime split (containerd splits at 16 KiB), joined up to the next {@code F}.
 */
class CriLineDecoderTest {
  private final AtomicLong malformed = new AtomicLong();

  private List<FramedLine> decode(String file, int maxBytes) {
    LineFramer framer = new LineFramer(maxBytes, false, false, 0);
    CriLineDecoder cri = new CriLineDecoder(maxBytes, true, malformed);
    List<FramedLine> out = new ArrayList<>();
    byte[] b = file.getBytes(StandardCharsets.UTF_8);
    framer.feed(b, 0, b.length, l -> cri.accept(l, out::add));
    return out;
  }

  @Test
  void stripsThePrefixAndKeepsStreamAndTime() {
    String l1 = "2026-11-22T10:00:00.123456789Z stdout F [rank0]: epoch 1 loss 0.52\n";
    String l2 = "2026-11-22T10:00:01.000000001Z stderr F RuntimeError: CUDA error: out of memory\n";
    List<FramedLine> out = decode(l1 + l2, 64 * 1024);
    assertEquals(2, out.size());
    assertEquals("[rank0]: epoch 1 loss 0.52", out.get(0).text());
    assertEquals("stdout", out.get(0).stream());
    assertEquals(Instant.parse("2026-11-22T10:00:00.123456789Z"), out.get(0).time());
    assertEquals(0, out.get(0).start());
    assertEquals(l1.length(), out.get(0).end());
    assertEquals("RuntimeError: CUDA error: out of memory", out.get(1).text());
    assertEquals("stderr", out.get(1).stream());
    assertEquals(l1.length(), out.get(1).start());
    assertEquals(0, malformed.get());
  }

  @Test
  void joinsPartialFragmentsUpToTheFullLine() {
    String p1 = "2026-11-22T10:00:00.000000001Z stdout P {\"step\": 12, \n";
    String p2 = "2026-11-22T10:00:00.000000002Z stdout P \"loss\": 0.5\n";
    String f = "2026-11-22T10:00:00.000000003Z stdout F }\n";
    List<FramedLine> out = decode(p1 + p2 + f + "2026-11-22T10:00:01Z stdout F next\n", 4096);
    assertEquals(2, out.size());
    assertEquals("{\"step\": 12, \"loss\": 0.5}", out.get(0).text());
    assertEquals(0, out.get(0).start());
    assertEquals((p1 + p2 + f).length(), out.get(0).end()); // acked past the F line only
    assertEquals(Instant.parse("2026-11-22T10:00:00.000000001Z"), out.get(0).time());
    assertEquals("next", out.get(1).text());
  }

  @Test
  void anOpenGroupEmitsNothingUntilItsFullLine() {
    List<FramedLine> out = decode("2026-11-22T10:00:00Z stdout P half a line\n", 4096);
    assertTrue(out.isEmpty());
  }

  @Test
  void crioOffsetTimesAndEmptyLines() {
    // CRI-O writes the node's offset; an empty line is the prefix and a trailing space
    List<FramedLine> out =
        decode(
            "2026-11-22T15:30:00.5+05:30 stdout F \n2026-11-22T15:30:01+05:30 stdout F x\n", 4096);
    assertEquals("", out.get(0).text());
    assertEquals(Instant.parse("2026-11-22T10:00:00.5Z"), out.get(0).time());
    assertEquals("x", out.get(1).text());
  }

  @Test
  void malformedLinesPassThroughAndAreCounted() {
    String bad = "panic: not a CRI line\n";
    List<FramedLine> out =
        decode(
            bad
                + "notatime stdout F text\n"
                + "2026-11-22T10:00:00Z stdlog F text\n"
                + "2026-11-22T10:00:00Z stdout X text\n"
                + "2026-11-22T10:00:00Z stdout F ok\n",
            4096);
    assertEquals(5, out.size());
    assertEquals("panic: not a CRI line", out.get(0).text());
    assertNull(out.get(0).stream());
    assertNull(out.get(0).time());
    assertEquals("notatime stdout F text", out.get(1).text());
    assertEquals("ok", out.get(4).text());
    assertEquals(4, malformed.get());
  }

  @Test
  void carriageReturnsRedrawTheContentNotThePrefix() {
    // tqdm writes "\r" redraws; the runtime splits only at "\n", so they stay in one CRI line
    String tqdm =
        "2026-11-22T10:00:00Z stderr F \r 10%|#         | 1/10\r 50%|#####     | 5/10"
            + "\r100%|##########| 10/10\n";
    List<FramedLine> out = decode(tqdm + "2026-11-22T10:00:01Z stdout F done\r\n", 4096);
    assertEquals(2, out.size());
    assertEquals("100%|##########| 10/10", out.get(0).text());
    assertEquals("stderr", out.get(0).stream());
    assertEquals("done", out.get(1).text()); // a CRLF's CR is dropped
    assertEquals(0, malformed.get());
  }

  @Test
  void aRedrawAcrossFragmentsKeepsTheLastOne() {
    String s =
        "2026-11-22T10:00:00Z stderr P  40%|####\r\n"
            + "2026-11-22T10:00:00Z stderr F  90%|#########\n";
    assertEquals(" 90%|#########", decode(s, 4096).get(0).text());
  }

  @Test
  void ansiEscapesAreRemovedFromTheContent() {
    FramedLine l =
        decode("2026-11-22T10:00:00Z stdout F \u001b[31mERROR\u001b[0m boom\n", 4096).get(0);
    assertEquals("ERROR boom", l.text());
    assertEquals("\u001b[31mERROR\u001b[0m boom", l.raw());
  }

  @Test
  void aJoinedLineIsBoundedWithTheMarker() {
    StringBuilder s = new StringBuilder();
    for (int i = 0; i < 10; i++) {
      s.append("2026-11-22T10:00:00Z stdout P ").append("x".repeat(500)).append('\n');
    }
    s.append("2026-11-22T10:00:00Z stdout F end\n");
    s.append("2026-11-22T10:00:01Z stdout F after\n");
    List<FramedLine> out = decode(s.toString(), 2048);
    assertEquals(2, out.size());
    assertTrue(out.get(0).truncated());
    assertEquals("x".repeat(2048) + LineFramer.TRUNCATED_MARKER, out.get(0).text());
    assertEquals(s.length() - "2026-11-22T10:00:01Z stdout F after\n".length(), out.get(0).end());
    assertFalse(out.get(1).truncated());
    assertEquals("after", out.get(1).text());
  }

  @Test
  void anInterleavedStreamEndsTheOpenGroup() {
    String s =
        "2026-11-22T10:00:00Z stdout P part\n"
            + "2026-11-22T10:00:00Z stderr F warning\n"
            + "2026-11-22T10:00:00Z stdout F rest\n";
    List<FramedLine> out = decode(s, 4096);
    assertEquals(List.of("part", "warning", "rest"), out.stream().map(FramedLine::text).toList());
    assertEquals(
        List.of("stdout", "stderr", "stdout"), out.stream().map(FramedLine::stream).toList());
  }
}
