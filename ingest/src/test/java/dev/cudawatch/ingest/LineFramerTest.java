package dev.cudawatch.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.ingest.framing.FramedLine;
import dev.cudawatch.ingest.framing.LineFramer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class LineFramerTest {
  private final List<FramedLine> out = new ArrayList<>();

  private void feed(LineFramer f, byte[] b) {
    // one byte at a time: lines split across reads must come out whole
    for (int i = 0; i < b.length; i++) {
      f.feed(b, i, 1, out::add);
    }
  }

  @Test
  void linesCarryTheirByteOffsets() {
    LineFramer f = new LineFramer(100, true, 1000);
    feed(f, "ab\r\ncd\nef".getBytes(StandardCharsets.UTF_8));
    assertEquals(
        List.of(new FramedLine(1000, 1004, "ab", false), new FramedLine(1004, 1007, "cd", false)),
        out);
    f.flush(out::add);
    assertEquals(new FramedLine(1007, 1009, "ef", false), out.get(2));
  }

  @Test
  void progressBarsCollapseToTheirLastState() {
    LineFramer f = new LineFramer(64, true, 0);
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i <= 100_000; i++) {
      sb.append('\r').append(i % 100).append("%|####|");
    }
    sb.append(" done\n");
    feed(f, sb.toString().getBytes(StandardCharsets.UTF_8));
    assertEquals(1, out.size());
    assertEquals("0%|####| done", out.get(0).text());
    assertTrue(!out.get(0).truncated());
  }

  @Test
  void longLinesAreCutWithAMarker() {
    LineFramer f = new LineFramer(10, true, 0);
    feed(f, ("x".repeat(1000) + "\nok\n").getBytes(StandardCharsets.UTF_8));
    assertEquals("xxxxxxxxxx" + LineFramer.TRUNCATED_MARKER, out.get(0).text());
    assertTrue(out.get(0).truncated());
    assertEquals(1001, out.get(0).end());
    assertEquals("ok", out.get(1).text());
  }

  @Test
  void badBytesAndColoursAreCleaned() {
    LineFramer f = new LineFramer(100, true, 0);
    feed(
        f,
        new byte[] {0x1b, '[', '3', '1', 'm', 'E', (byte) 0xff, 0, 'z', 0x1b, '[', '0', 'm', '\n'});
    assertEquals("E\uFFFD\u0000z", out.get(0).text());
    assertEquals(
        "\u001b[31mE\uFFFD\u0000z\u001b[0m", out.get(0).raw(), "the line as written, for keep_raw");
  }

  @Test
  void invalidUtf8BecomesWhatAReplacingDecoderMakesOfIt() throws Exception {
    // random bytes, heavy in UTF-8 lead and continuation bytes: truncated, overlong, surrogates
    java.util.SplittableRandom random = new java.util.SplittableRandom(35);
    java.nio.charset.CharsetDecoder decoder =
        StandardCharsets.UTF_8
            .newDecoder()
            .onMalformedInput(java.nio.charset.CodingErrorAction.REPLACE)
            .onUnmappableCharacter(java.nio.charset.CodingErrorAction.REPLACE);
    byte[] pool = {
      'a',
      (byte) 0x80,
      (byte) 0xbf,
      (byte) 0xc0,
      (byte) 0xc3,
      (byte) 0xe0,
      (byte) 0xed,
      (byte) 0xa0,
      (byte) 0xf0,
      (byte) 0xf4,
      (byte) 0x90,
      (byte) 0xff,
      (byte) 0x8f
    };
    for (int i = 0; i < 20_000; i++) {
      byte[] b = new byte[1 + random.nextInt(12)];
      for (int j = 0; j < b.length; j++) {
        b[j] = pool[random.nextInt(pool.length)];
      }
      out.clear();
      LineFramer f = new LineFramer(100, false, 0);
      f.feed(b, 0, b.length, out::add);
      f.flush(out::add);
      String expected = decoder.reset().decode(java.nio.ByteBuffer.wrap(b)).toString();
      assertEquals(expected, out.get(0).text(), () -> java.util.HexFormat.of().formatHex(b));
    }
  }
}
