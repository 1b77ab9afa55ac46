package dev.cudawatch.diagnosis.offline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class LineReaderTest {
  private static LineReader reader(byte[] b, int max) {
    return new LineReader(new ByteArrayInputStream(b), max);
  }

  @Test
  void carriageReturnsCollapseToTheLastState() throws IOException {
    try (LineReader r = reader("a\r\nb\rc\rd\ne".getBytes(StandardCharsets.UTF_8), 100)) {
      assertEquals("a", r.next());
      assertEquals("d", r.next());
      assertEquals("e", r.next());
      assertNull(r.next());
    }
  }

  @Test
  void aLongLineIsCutAndCounted() throws IOException {
    byte[] big = ("x".repeat(10_000_000) + "\nnext\n").getBytes(StandardCharsets.US_ASCII);
    try (LineReader r = reader(big, 1000)) {
      assertEquals(1000, r.next().length());
      assertEquals("next", r.next());
      assertEquals(1, r.truncated());
    }
  }

  @Test
  void aMillionProgressUpdatesNeverGrowALine() throws IOException {
    InputStream in =
        new InputStream() {
          long n;
          final byte[] unit = "\r 42%|####      | 42/100".getBytes(StandardCharsets.US_ASCII);

          @Override
          public int read() {
            if (n >= 1_000_000L * unit.length) {
              return -1;
            }
            return unit[(int) (n++ % unit.length)];
          }
        };
    try (LineReader r = new LineReader(in, 4096)) {
      String line = r.next();
      assertEquals(" 42%|####      | 42/100", line);
      assertEquals(0, r.truncated());
    }
  }

  @Test
  void invalidUtf8AndNulBytesAreReplacedNotFatal() throws IOException {
    byte[] b = {'o', 'k', (byte) 0xC3, (byte) 0x28, 0, 'z', '\n'};
    try (LineReader r = reader(b, 100)) {
      String s = r.next();
      assertTrue(s.startsWith("ok\uFFFD"));
      assertTrue(s.endsWith("\u0000z"));
    }
  }
}
