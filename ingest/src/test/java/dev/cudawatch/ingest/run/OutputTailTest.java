package dev.cudawatch.ingest.run;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The kept window starts at a whole line and numbers it as the job's stream does. */
class OutputTailTest {
  private static void offer(OutputTail t, String s) {
    byte[] b = s.getBytes(StandardCharsets.US_ASCII);
    t.offer(b, b.length);
  }

  private static String text(OutputTail.Window w) {
    return new String(w.bytes(), StandardCharsets.US_ASCII);
  }

  @Test
  void whatFitsIsKeptWhole() {
    OutputTail t = new OutputTail(64);
    offer(t, "a\nb");
    offer(t, "c\n");
    OutputTail.Window w = t.window();
    assertEquals("a\nbc\n", text(w));
    assertEquals(1, w.firstLine());
    assertEquals(0, w.droppedBytes());
  }

  @Test
  void theOldestLinesMakeWayAndTheCutLineIsDropped() {
    OutputTail t = new OutputTail(10);
    for (int i = 1; i <= 20; i++) {
      offer(t, "l" + i + "\n"); // "l1\n" .. "l20\n": 3 or 4 bytes each
    }
    OutputTail.Window w = t.window();
    // the last 10 bytes are "9\nl20\n" preceded by the end of l18: "18\nl19\nl20\n" cut to 10
    assertEquals("l19\nl20\n", text(w));
    assertEquals(19, w.firstLine());
    long total = 9 * 3 + 11 * 4;
    assertEquals(total - 8, w.droppedBytes());
  }

  @Test
  void aChunkLargerThanTheRingKeepsItsEnd() {
    OutputTail t = new OutputTail(8);
    offer(t, "0123456789\nabcdef\n");
    OutputTail.Window w = t.window();
    assertEquals("abcdef\n", text(w));
    assertEquals(2, w.firstLine());
  }

  @Test
  void aZeroRingKeepsNothing() {
    OutputTail t = new OutputTail(0);
    offer(t, "x\n");
    assertEquals(0, t.window().bytes().length);
  }
}
