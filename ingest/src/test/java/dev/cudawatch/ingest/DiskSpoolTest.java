package dev.cudawatch.ingest;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.ingest.spool.DiskSpool;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
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

  @Test
  void aTornRecordAtTheEndOfASegmentIsSkippedCountedAndReadingGoesOn() throws Exception {
    try (DiskSpool s = new DiskSpool(dir, 1 << 20, 1 << 16)) {
      for (int i = 0; i < 10; i++) {
        s.append(b("record-" + i));
      }
    }
    Path seg = segments().get(0);
    long size = Files.size(seg);
    try (FileChannel c = FileChannel.open(seg, StandardOpenOption.WRITE)) {
      c.truncate(size - 3); // a crash cut the last record short
    }
    try (DiskSpool s = new DiskSpool(dir, 1 << 20, 1 << 16)) {
      for (int i = 0; i < 9; i++) {
        assertArrayEquals(b("record-" + i), s.poll(0).bytes());
      }
      s.append(b("after the crash"));
      // before: the reader waited for the torn record to complete, forever
      assertArrayEquals(b("after the crash"), s.poll(0).bytes());
      assertEquals(1, s.tornRecords());
      assertEquals(4 + "record-9".length() - 3, s.tornBytes());
    }
  }

  @Test
  void aCorruptCursorOrStrayFilesDoNotStopTheSpool() throws Exception {
    try (DiskSpool s = new DiskSpool(dir, 1 << 20, 1 << 16)) {
      s.append(b("a"));
      s.append(b("b"));
      DiskSpool.Entry a = s.poll(0);
      s.commit(a.seq(), a.offsetAfter());
    }
    for (String junk :
        List.of(
            "12 abc\n",
            "",
            "-4 7",
            "99999999999999999999999 1",
            "1 999999",
            "{\"format\":2,\"segment\":1}",
            "{\"format\":2,\"segment\":-1,\"offset\":0}",
            "{\"format\":2,\"segment\":1,\"offset\":999999}")) {
      Files.writeString(dir.resolve("cursor"), junk);
      Files.writeString(dir.resolve("notes.seg"), "not a segment");
      Files.writeString(dir.resolve(".cursor.123.tmp"), "left by a crash");
      try (DiskSpool s = new DiskSpool(dir, 1 << 20, 1 << 16)) {
        assertEquals(1, s.cursorResets(), "'" + junk + "' is counted");
        assertArrayEquals(b("a"), s.poll(0).bytes(), "read again from the start: nothing lost");
        assertArrayEquals(b("b"), s.poll(0).bytes());
      }
      assertFalse(Files.exists(dir.resolve(".cursor.123.tmp")));
    }
  }

  private static final Path OLD_SPOOL =
      Path.of("src/test/resources/upgrade/release-5be5e18/state/spool");

  /** The texts of spooled records ([key length][key][record JSON]) read from now on. */
  private static List<String> drain(DiskSpool s) throws Exception {
    List<String> out = new java.util.ArrayList<>();
    for (DiskSpool.Entry e; (e = s.poll(0)) != null; ) {
      String all = new String(e.bytes(), StandardCharsets.UTF_8);
      out.add(
          dev.cudawatch.common.wire.WireJson.mapper()
              .readTree(all.substring(all.indexOf('{')))
              .path("text")
              .asText());
    }
    return out;
  }

  private void copyOldSpool() throws Exception {
    try (var files = Files.list(OLD_SPOOL)) {
      for (Path f : files.toList()) {
        Files.copy(f, dir.resolve(f.getFileName().toString()));
      }
    }
  }

  @Test
  void theCursorOfRelease5be5e18IsReadOnAndMigratedByTheNextCommit() throws Exception {
    copyOldSpool();
    assertEquals("1 1038", Files.readString(dir.resolve("cursor")).strip(), "the old form");
    try (DiskSpool s = new DiskSpool(dir, 1 << 20, 1 << 16)) {
      List<String> unsent = drain(s);
      assertEquals(2, unsent.size(), unsent.toString());
      assertTrue(unsent.get(0).endsWith("phase-2 first"), unsent.toString());
      assertTrue(unsent.get(1).endsWith("phase-2 second"), unsent.toString());
      assertEquals(0, s.cursorResets());
      s.commit(1, Files.size(dir.resolve("00000000000000000001.seg")));
    }
    var now = dev.cudawatch.common.wire.WireJson.mapper().readTree(dir.resolve("cursor").toFile());
    assertEquals(dev.cudawatch.ingest.spool.SpoolCursor.FORMAT, now.path("format").asInt());
    try (DiskSpool s = new DiskSpool(dir, 1 << 20, 1 << 16)) {
      assertEquals(List.of(), drain(s), "the new form reads back: nothing again");
    }
  }

  @Test
  void aCursorOfANewerReleaseIsCountedAndTheSpoolReadAgainNeverSkipped() throws Exception {
    copyOldSpool();
    Files.writeString(
        dir.resolve("cursor"), "{\"format\":3,\"segment\":1,\"offset\":2072,\"x\":1}");
    try (DiskSpool s = new DiskSpool(dir, 1 << 20, 1 << 16)) {
      assertEquals(1, s.cursorResets());
      assertEquals(4, drain(s).size(), "all four records again, the sent ones repeat by id");
    }
  }

  @Test
  void theSpoolIsPrivateToItsOwner() throws Exception {
    Path spool = dir.resolve("state/spool");
    try (DiskSpool s = new DiskSpool(spool, 1 << 20, 1 << 16)) {
      s.append(b("job output"));
      DiskSpool.Entry e = s.poll(0);
      s.commit(e.seq(), e.offsetAfter());
    }
    assertEquals("rwx------", mode(spool));
    assertEquals("rwx------", mode(dir.resolve("state")));
    assertEquals("rw-------", mode(spool.resolve("cursor")));
    for (Path seg : segmentsIn(spool)) {
      assertEquals("rw-------", mode(seg));
    }
  }

  @Test
  void segmentsAreVersionedAndHeaderlessOnesOfEarlierReleasesAreStillRead() throws Exception {
    // format 1, as releases up to 61b97b9 wrote it: [length][bytes] from the first byte
    java.nio.ByteBuffer old = java.nio.ByteBuffer.allocate(4 + 3 + 4 + 3);
    old.putInt(3).put(b("one")).putInt(3).put(b("two"));
    Files.write(dir.resolve("00000000000000000001.seg"), old.array());
    // a segment of a format newer than this reader: left alone, counted, never misread
    java.nio.ByteBuffer future = java.nio.ByteBuffer.allocate(8 + 4 + 6);
    future.putInt(DiskSpool.MAGIC).putInt(DiskSpool.FORMAT + 1).putInt(6).put(b("future"));
    Files.write(dir.resolve("00000000000000000002.seg"), future.array());
    try (DiskSpool s = new DiskSpool(dir, 1 << 20, 1 << 16)) {
      assertEquals(1, s.unsupportedSegments());
      assertArrayEquals(b("one"), s.poll(0).bytes());
      assertArrayEquals(b("two"), s.poll(0).bytes());
      s.append(b("three"));
      assertArrayEquals(b("three"), s.poll(0).bytes());
      assertNull(s.poll(0));
      assertFalse(s.hasUnread(), "a new segment's header is not a record waiting");
    }
    Path newest = segments().get(segments().size() - 1);
    try (var in = Files.newInputStream(newest)) {
      assertEquals(DiskSpool.FORMAT, DiskSpool.segmentFormat(in), "new segments carry the header");
    }
    List<String> read = new java.util.ArrayList<>();
    try (var in = Files.newInputStream(newest)) {
      assertEquals(
          0, DiskSpool.readSegment(in, 0, r -> read.add(new String(r, StandardCharsets.UTF_8))));
    }
    assertEquals(List.of("three"), read);
    assertTrue(Files.exists(dir.resolve("00000000000000000002.seg")), "the newer one is kept");
  }

  @Test
  void aSpoolIsLockedWhileOpenAndItsFilesFollowItsDirectorysGroup() throws Exception {
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwx---"));
    try (DiskSpool s = new DiskSpool(dir, 1 << 20, 1 << 16)) {
      s.append(b("x"));
      s.commit(s.poll(0).seq(), 4);
      try (FileChannel lock = FileChannel.open(dir.resolve(DiskSpool.LOCK))) {
        // another process would get null here; this one is told it holds the lock itself
        org.junit.jupiter.api.Assertions.assertThrows(
            java.nio.channels.OverlappingFileLockException.class,
            () -> lock.tryLock(0, Long.MAX_VALUE, true));
      }
      for (Path seg : segments()) {
        assertEquals("rw-r-----", mode(seg), "a shared directory: its group reads the segments");
      }
      assertEquals("rw-r-----", mode(dir.resolve("cursor")));
    }
    try (FileChannel lock = FileChannel.open(dir.resolve(DiskSpool.LOCK))) {
      var held = lock.tryLock(0, Long.MAX_VALUE, true);
      assertTrue(held != null, "released when the spool is closed");
      held.release();
    }
  }

  private static String mode(Path p) throws Exception {
    return PosixFilePermissions.toString(Files.getPosixFilePermissions(p));
  }

  private List<Path> segments() throws Exception {
    return segmentsIn(dir);
  }

  private static List<Path> segmentsIn(Path d) throws Exception {
    try (var s = Files.list(d)) {
      return s.filter(p -> p.getFileName().toString().matches("\\d+\\.seg")).sorted().toList();
    }
  }
}
