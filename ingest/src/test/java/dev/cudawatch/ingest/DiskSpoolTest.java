package dev.cudawatch.ingest;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.ingest.spool.DiskSpool;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DiskSpoolTest {
  @TempDir Path dir;

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void recordsSurviveARestartFromTheCommittedCursor() throws Exception {
    try (DiskSpool s = new DiskSpool(dir, 1 << 20, 1 << 16)) {
      for (int i = 0; i < 10; i++) {
        s.append(b("r" + i));
      }
      s.sync();
      DiskSpool.Entry e = null;
      for (int i = 0; i < 4; i++) {
        e = s.poll(0);
      }
      s.commit(e.seq(), e.offsetAfter()); // r0..r3 delivered
      s.poll(0); // r4 read, not delivered: it must come back
    }
    try (DiskSpool s = new DiskSpool(dir, 1 << 20, 1 << 16)) {
      for (int i = 4; i < 10; i++) {
        assertArrayEquals(b("r" + i), s.poll(0).bytes());
      }
      assertNull(s.poll(0));
      assertFalse(s.hasUnread());
    }
  }

  @Test
  void pastItsLimitTheOldestSegmentGoesAndIsCounted() throws Exception {
    try (DiskSpool s = new DiskSpool(dir, 4 * 65_536L, 65_536)) {
      byte[] rec = new byte[1000];
      for (int i = 0; i < 1000; i++) {
        s.append(rec);
      }
      assertTrue(s.totalBytes() <= 4 * 65_536L + 65_536, "bounded: " + s.totalBytes());
      assertTrue(s.dropped() > 0, "dropped records are counted");
      long readable = 0;
      while (s.poll(0) != null) {
        readable++;
      }
      assertEquals(
          1000, readable + s.dropped(), "every record is either readable or counted as dropped");
    }
  }

  @Test
  void rewindReadsAgainFromTheLastCommit() throws Exception {
    try (DiskSpool s = new DiskSpool(dir, 1 << 20, 1 << 16)) {
      s.append(b("a"));
      s.append(b("b"));
      DiskSpool.Entry a = s.poll(0);
      s.commit(a.seq(), a.offsetAfter());
      assertArrayEquals(b("b"), s.poll(0).bytes());
      s.rewind();
      assertArrayEquals(b("b"), s.poll(0).bytes());
    }
  }
}
