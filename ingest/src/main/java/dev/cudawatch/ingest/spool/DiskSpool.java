package dev.cudawatch.ingest.spool;

import dev.cudawatch.common.io.AtomicFiles;
import dev.cudawatch.ingest.state.StateFile;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A bounded, durable queue of records on disk, for sources that cannot be read again (a job's
 * pipes, stdin, the kernel log): records are appended to segment files ({@code [length][bytes]})
 * and read back in order; the read cursor is checkpointed crash-safely. When the spool would pass
 * its size limit, the oldest segment is deleted and its unsent records are counted as dropped,
 * never silently.
 *
 * <p>A crash or a full disk can leave a record cut short at the end of a segment, and a cursor that
 * cannot be read: the torn tail is skipped (its bytes counted and logged as lost), an unreadable
 * cursor makes the spool read again from its oldest segment (records repeat, never vanish), and
 * files that are not segments are ignored, so the agent always starts. Segments and the cursor are
 * created {@code 0600} in a {@code 0700} directory: they hold job output. In a directory whose
 * group may enter it (a run's spool in the node's handoff root, see {@code RunSpools}) they are
 * {@code 0640}, whatever the umask: the agent reads them through that group.
 *
 * <p>Segments are versioned: each starts with {@link #MAGIC} and {@link #FORMAT}. The magic sits
 * where a record's length would be and is negative, so headerless segments of earlier releases
 * (format 1) are still read; a segment of a format newer than this reader is left alone, logged and
 * counted, never misread. The cursor is a versioned {@link SpoolCursor}; one of a newer format is
 * treated as unreadable (read again, counted), never guessed at.
 *
 * <p>While open, a spool holds an exclusive lock on its {@code lock} file (created under a
 * temporary name, locked, then linked into place, so it is never seen unlocked): another process
 * (the node agent looking for spools of finished runs) tells a live spool from a left one by it.
 */
public final class DiskSpool implements AutoCloseable {
  private static final String SUFFIX = ".seg";

  /** First 4 bytes of a versioned segment: negative, so never a record's length. */
  public static final int MAGIC = 0xCD5E_6702;

  /** The segment format written: 2 = [MAGIC][2] header, then [length][bytes] records. */
  public static final int FORMAT = 2;

  static final int HEADER_BYTES = 8;
  public static final String LOCK = "lock";

  /** The read cursor's file: a {@link SpoolCursor}. */
  public static final String CURSOR = "cursor";

  private static final java.util.Set<java.nio.file.attribute.PosixFilePermission> GROUP_READ =
      PosixFilePermissions.fromString("rw-r-----");
  private static final Logger LOG = LoggerFactory.getLogger(DiskSpool.class);
  private static final java.nio.file.attribute.FileAttribute<?> OWNER_ONLY =
      PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"));

  private final Path dir;
  private final long maxBytes;
  private final long segmentBytes;
  private final TreeMap<Long, Long> segmentSizes = new TreeMap<>(); // seq -> bytes
  private final TreeMap<Long, Long> segmentRecords = new TreeMap<>(); // seq -> records written
  private final TreeMap<Long, Integer> segmentStarts = new TreeMap<>(); // seq -> header bytes
  private final AtomicLong unsupported = new AtomicLong();
  private final boolean shared;
  private final FileChannel lockChannel;
  private final AtomicLong dropped = new AtomicLong();
  private final AtomicLong appended = new AtomicLong();
  private final AtomicLong tornBytes = new AtomicLong();
  private final AtomicLong tornRecords = new AtomicLong();
  private final AtomicLong cursorResets = new AtomicLong();
  private volatile String writeError;
  private FileChannel writer;
  private long writeSeq;
  private long writeSize;
  private final ByteBuffer header = ByteBuffer.allocate(4);

  // reader state
  private long committedSeq;
  private long committedOffset;
  private long readSeq;
  private long readOffset;
  private long readRecordsInSegment;
  private InputStream reader;
  private long readerSeq = -1;

  public DiskSpool(Path dir, long maxBytes, long segmentBytes) throws IOException {
    this.dir = AtomicFiles.createPrivateDirectories(dir);
    this.maxBytes = maxBytes;
    this.segmentBytes = segmentBytes;
    this.shared = groupMayEnter(dir);
    this.lockChannel = lock(dir, shared);
    AtomicFiles.clearTemps(dir);
    long lastSeen = 0;
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, "*" + SUFFIX)) {
      for (Path p : ds) {
        String name = p.getFileName().toString();
        long seq;
        try {
          seq = Long.parseLong(name.substring(0, name.length() - SUFFIX.length()));
        } catch (NumberFormatException e) {
          LOG.warn("ignoring {} in the spool: not a segment of it", p);
          continue;
        }
        if (seq < 0 || !Files.isRegularFile(p, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
          LOG.warn("ignoring {} in the spool: not a segment of it", p);
          continue;
        }
        lastSeen = Math.max(lastSeen, seq); // new segments go after every one, kept or not
        int start;
        try (var in = Files.newInputStream(p)) {
          start = headerBytes(in);
        } catch (UnsupportedSegmentException e) {
          unsupported.incrementAndGet();
          LOG.warn("leaving {} in the spool: {}", p, e.getMessage());
          continue;
        }
        segmentSizes.put(seq, Files.size(p));
        segmentStarts.put(seq, start);
        segmentRecords.put(seq, countRecords(p, start));
      }
    }
    long[] cursor = readCursor();
    readSeq = cursor[0];
    readOffset = cursor[1];
    committedSeq = readSeq;
    committedOffset = readOffset;
    writeSeq =
        segmentSizes.isEmpty()
            ? Math.max(Math.max(readSeq, 1), lastSeen + 1)
            : Math.max(segmentSizes.lastKey(), lastSeen) + 1;
    if (segmentSizes.isEmpty() || segmentSizes.firstKey() > readSeq) {
      readSeq = segmentSizes.isEmpty() ? writeSeq : segmentSizes.firstKey();
      readOffset = 0;
    }
    try {
      openWriter();
    } catch (IOException e) {
      writeError = e.toString(); // a full disk at start: the next append tries again
      LOG.warn("cannot open a spool segment in {}: {}", dir, e.toString());
    }
  }

  private Path segment(long seq) {
    return dir.resolve(String.format("%020d%s", seq, SUFFIX));
  }

  private void openWriter() throws IOException {
    writer =
        FileChannel.open(
            segment(writeSeq),
            java.util.Set.of(
                StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND),
            OWNER_ONLY);
    writeSize = writer.size();
    if (writeSize < HEADER_BYTES && !segmentStarts.containsKey(writeSeq)) {
      // a new segment (or one whose header a crash cut short) starts with the version header
      writer.truncate(0);
      ByteBuffer h = ByteBuffer.allocate(HEADER_BYTES).putInt(MAGIC).putInt(FORMAT).flip();
      while (h.hasRemaining()) {
        writer.write(h);
      }
      writeSize = HEADER_BYTES;
      if (shared) {
        Files.setPosixFilePermissions(segment(writeSeq), GROUP_READ);
      }
    }
    segmentStarts.putIfAbsent(writeSeq, writeSize == 0 ? 0 : HEADER_BYTES);
    segmentSizes.put(writeSeq, writeSize);
    segmentRecords.putIfAbsent(writeSeq, 0L);
  }

  /** The header's length at the start of a segment: 0 for format 1 (no header), 8 for format 2. */
  static int headerBytes(InputStream in) throws IOException {
    byte[] h = in.readNBytes(HEADER_BYTES);
    if (h.length < 4 || ByteBuffer.wrap(h).getInt() != MAGIC) {
      return 0; // format 1: the first record's length, or an empty segment
    }
    if (h.length < HEADER_BYTES) {
      return h.length; // a header cut short by a crash: no records follow it
    }
    int format = ByteBuffer.wrap(h).getInt(4);
    if (format < 2 || format > FORMAT) {
      throw new UnsupportedSegmentException(
          "segment format " + format + " (this release reads formats 1 to " + FORMAT + ")");
    }
    return HEADER_BYTES;
  }

  /** The format of a segment from its first bytes: 1 (no header, earlier releases) or 2. */
  public static int segmentFormat(InputStream in) throws IOException {
    return headerBytes(in) == HEADER_BYTES ? FORMAT : 1;
  }

  /** A segment written by a newer release (or not a segment): left alone, never misread. */
  public static final class UnsupportedSegmentException extends IOException {
    private static final long serialVersionUID = 1L;

    UnsupportedSegmentException(String message) {
      super(message);
    }
  }

  /**
   * Reads every whole record of a segment from {@code offset} (0: its start) to {@code each};
   * returns the bytes of an incomplete record at its end (a crash cut it), 0 when none. For a spool
   * that is not open: the agent adopting a finished run's spool.
   */
  public static long readSegment(
      InputStream segment, long offset, java.util.function.Consumer<byte[]> each)
      throws IOException {
    DataInputStream in = new DataInputStream(new java.io.BufferedInputStream(segment, 1 << 16));
    in.mark(HEADER_BYTES);
    long pos = headerBytes(in);
    in.reset();
    in.skipNBytes(pos);
    for (long left = offset - pos; left > 0; ) {
      long n = in.skip(left);
      if (n <= 0) {
        return 0; // a cursor at (or past) the end: nothing left to read
      }
      left -= n;
    }
    while (true) {
      byte[] len = in.readNBytes(4);
      if (len.length < 4) {
        return len.length;
      }
      int n = ByteBuffer.wrap(len).getInt();
      if (n < 0) {
        return 4 + in.transferTo(java.io.OutputStream.nullOutputStream());
      }
      byte[] b = in.readNBytes(n);
      if (b.length < n) {
        return 4 + b.length;
      }
      each.accept(b);
    }
  }

  private static boolean groupMayEnter(Path dir) throws IOException {
    var perms = Files.getPosixFilePermissions(dir, java.nio.file.LinkOption.NOFOLLOW_LINKS);
    return perms.contains(java.nio.file.attribute.PosixFilePermission.GROUP_EXECUTE)
        && perms.contains(java.nio.file.attribute.PosixFilePermission.GROUP_READ);
  }

  /**
   * Takes the spool's lock. A lock file is made under a temporary name, locked and only then linked
   * into place, so nobody finds it unlocked while this spool is being opened. Another DiskSpool of
   * this process on the same directory (tests reopening one) goes on without it: a process cannot
   * lock a file against itself.
   */
  private static FileChannel lock(Path dir, boolean shared) throws IOException {
    Path lock = dir.resolve(LOCK);
    var perms = shared ? GROUP_READ : PosixFilePermissions.fromString("rw-------");
    for (int attempt = 0; attempt < 3; attempt++) {
      if (Files.exists(lock, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
        FileChannel c =
            FileChannel.open(
                lock, StandardOpenOption.WRITE, java.nio.file.LinkOption.NOFOLLOW_LINKS);
        try {
          if (c.tryLock() == null) {
            c.close();
            throw new IOException(dir + " is in use by another process");
          }
        } catch (java.nio.channels.OverlappingFileLockException sameProcess) {
          c.close();
          return null;
        }
        return c;
      }
      Path tmp = dir.resolve(".lock." + java.util.UUID.randomUUID() + ".new");
      FileChannel c =
          FileChannel.open(
              tmp,
              java.util.Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
              PosixFilePermissions.asFileAttribute(perms));
      try {
        Files.setPosixFilePermissions(tmp, perms); // the umask may have taken the group's read
        c.lock();
        Files.createLink(lock, tmp);
        return c;
      } catch (java.nio.file.FileAlreadyExistsException raced) {
        c.close(); // another opened it first: take (or fail on) theirs
      } catch (IOException | RuntimeException e) {
        c.close();
        throw e;
      } finally {
        Files.deleteIfExists(tmp);
      }
    }
    throw new IOException("cannot lock " + lock);
  }

  /**
   * Appends a record; may delete the oldest segment to stay within the limit. A write that fails (a
   * full disk) leaves no partial record behind for later appends to follow.
   */
  public synchronized void append(byte[] record) throws IOException {
    if (writer == null || (writeSize > 0 && writeSize + record.length + 4 > segmentBytes)) {
      try {
        roll();
      } catch (IOException e) {
        writeError = e.toString();
        throw e;
      }
    }
    header.clear();
    header.putInt(record.length).flip();
    try {
      ByteBuffer body = ByteBuffer.wrap(record);
      while (header.hasRemaining() || body.hasRemaining()) {
        writer.write(new ByteBuffer[] {header, body});
      }
    } catch (IOException e) {
      undoPartialWrite();
      writeError = e.toString();
      throw e;
    }
    writeError = null;
    writeSize += record.length + 4;
    segmentSizes.put(writeSeq, writeSize);
    segmentRecords.merge(writeSeq, 1L, Long::sum);
    appended.incrementAndGet();
    while (totalBytes() > maxBytes && segmentSizes.size() > 1) {
      dropOldest();
    }
    notifyAll();
  }

  /** Seals the current segment and starts the next (or reopens after a failed start). */
  private void roll() throws IOException {
    if (writer != null) {
      FileChannel w = writer;
      writer = null;
      writeSeq++;
      try {
        w.force(false);
      } finally {
        w.close();
      }
    }
    openWriter();
  }

  private void undoPartialWrite() {
    try {
      writer.truncate(writeSize);
    } catch (IOException e) {
      // cannot cut it off: seal the segment; its reader stops at the last whole record
      try {
        writer.close();
      } catch (IOException ignored) {
        // closing a channel we give up on
      }
      writer = null;
      writeSeq++;
    }
  }

  /** Makes appended records durable. */
  public synchronized void sync() throws IOException {
    if (writer != null) {
      writer.force(false);
    }
  }

  private void dropOldest() throws IOException {
    long seq = segmentSizes.firstKey();
    long records = segmentRecords.getOrDefault(seq, 0L);
    long unread =
        seq == readSeq ? Math.max(0, records - readRecordsInSegment) : seq > readSeq ? records : 0;
    dropped.addAndGet(unread);
    segmentSizes.remove(seq);
    segmentRecords.remove(seq);
    segmentStarts.remove(seq);
    Files.deleteIfExists(segment(seq));
    if (seq >= readSeq) {
      closeReader();
      readSeq = segmentSizes.firstKey();
      readOffset = 0;
      readRecordsInSegment = 0;
    }
  }

  /**
   * The next unread record, waiting up to {@code waitMs} for one.
   *
   * @return the record and where reading resumes after it, or null
   */
  public synchronized Entry poll(long waitMs) throws IOException, InterruptedException {
    long deadline = System.nanoTime() / 1_000_000 + waitMs; // monotonic: a wait, not a date
    while (true) {
      Entry e = tryRead();
      if (e != null) {
        return e;
      }
      long left = deadline - System.nanoTime() / 1_000_000;
      if (left <= 0) {
        return null;
      }
      wait(left);
    }
  }

  private Entry tryRead() throws IOException {
    while (true) {
      Long size = segmentSizes.get(readSeq);
      if (size == null) {
        Long next = segmentSizes.higherKey(readSeq);
        if (next == null) {
          return null;
        }
        moveTo(next);
        continue;
      }
      int start = segmentStarts.getOrDefault(readSeq, 0);
      if (readOffset < start) {
        closeReader();
        readOffset = start;
      }
      if (readOffset + 4 <= size) {
        openReader();
        DataInputStream in = new DataInputStream(reader);
        int len;
        byte[] b;
        try {
          len = in.readInt();
          if (len < 0 || readOffset + 4 + len > size) {
            if (readSeq < writeSeq) {
              skipTornTail(size); // a sealed segment: the rest will never be completed
              continue;
            }
            closeReader(); // not a complete record yet: reopen at the cursor next time
            return null;
          }
          b = in.readNBytes(len);
        } catch (EOFException e) {
          closeReader();
          return null;
        }
        readOffset += 4 + len;
        readRecordsInSegment++;
        return new Entry(b, readSeq, readOffset);
      }
      if (readOffset < size && readSeq < writeSeq) {
        skipTornTail(size); // fewer than 4 bytes left: a length cut short
        continue;
      }
      if (readSeq < writeSeq) {
        Long next = segmentSizes.higherKey(readSeq);
        if (next == null) {
          return null;
        }
        moveTo(next);
        continue;
      }
      return null;
    }
  }

  /**
   * The end of a segment that is no longer written holds an incomplete record (a crash or a full
   * disk cut it): count and log the loss, and read on from the next segment.
   */
  private void skipTornTail(long size) {
    long lost = size - readOffset;
    tornBytes.addAndGet(lost);
    tornRecords.incrementAndGet();
    LOG.warn(
        "spool segment {} ends with an incomplete record ({} bytes at offset {}): skipped as lost",
        segment(readSeq),
        lost,
        readOffset);
    readOffset = size;
    Long next = segmentSizes.higherKey(readSeq);
    if (next != null) {
      moveTo(next);
    }
  }

  private void moveTo(long seq) {
    closeReader();
    readSeq = seq;
    readOffset = 0;
    readRecordsInSegment = 0;
  }

  private void openReader() throws IOException {
    if (reader == null || readerSeq != readSeq) {
      closeReader();
      reader = new java.io.BufferedInputStream(Files.newInputStream(segment(readSeq)), 1 << 16);
      long skipped = reader.skip(readOffset);
      while (skipped < readOffset) {
        skipped += reader.skip(readOffset - skipped);
      }
      readerSeq = readSeq;
    }
  }

  private void closeReader() {
    if (reader != null) {
      try {
        reader.close();
      } catch (IOException ignored) {
        // read-only stream
      }
      reader = null;
      readerSeq = -1;
    }
  }

  /**
   * Everything before {@code (seq, offset)} was delivered: checkpoint it and delete finished
   * segments.
   */
  public synchronized void commit(long seq, long offset) throws IOException {
    committedSeq = seq;
    committedOffset = offset;
    for (Long s : new ArrayList<>(segmentSizes.headMap(seq).keySet())) {
      if (s != writeSeq) {
        segmentSizes.remove(s);
        segmentRecords.remove(s);
        segmentStarts.remove(s);
        Files.deleteIfExists(segment(s));
      }
    }
    cursorFile().write(new SpoolCursor(seq, offset));
    if (shared) {
      Files.setPosixFilePermissions(dir.resolve(CURSOR), GROUP_READ);
    }
  }

  /** Reads again from the last committed cursor (after a failed send). */
  public synchronized void rewind() {
    closeReader();
    if (segmentSizes.containsKey(committedSeq)) {
      readSeq = committedSeq;
      readOffset = committedOffset;
    } else {
      readSeq = segmentSizes.isEmpty() ? writeSeq : segmentSizes.firstKey();
      readOffset = 0;
    }
    readRecordsInSegment = 0;
  }

  /** True while records are waiting to be read. */
  public synchronized boolean hasUnread() {
    for (var e : segmentSizes.tailMap(readSeq, true).entrySet()) {
      long start = segmentStarts.getOrDefault(e.getKey(), 0);
      if (e.getKey() == readSeq
          ? Math.max(readOffset, start) < e.getValue()
          : e.getValue() > start) {
        return true;
      }
    }
    return false;
  }

  private long[] readCursor() {
    StateFile<SpoolCursor> c = cursorFile();
    try {
      SpoolCursor cursor = c.read();
      if (cursor == null) {
        return new long[] {0, 0};
      }
      Long size = segmentSizes.get(cursor.segment());
      if (size != null && cursor.offset() > size) {
        throw new IOException("offset past the end of its segment");
      }
      return new long[] {cursor.segment(), cursor.offset()};
    } catch (IOException | RuntimeException e) {
      // a stray, corrupt or newer cursor must not stop the agent: read everything again (ids
      // repeat); never read on from a guess
      cursorResets.incrementAndGet();
      LOG.warn(
          "spool cursor unusable ({}): reading the spool again from its oldest segment",
          e.getMessage() != null && e.getMessage().contains(c.path().toString())
              ? e.getMessage()
              : c.path() + ": " + e.getMessage());
      return new long[] {0, 0};
    }
  }

  private StateFile<SpoolCursor> cursorFile() {
    return new StateFile<>(dir.resolve(CURSOR), SpoolCursor.CODEC);
  }

  private static long countRecords(Path p, int start) throws IOException {
    long n = 0;
    try (DataInputStream in =
        new DataInputStream(new java.io.BufferedInputStream(Files.newInputStream(p)))) {
      in.skipNBytes(start);
      while (true) {
        int len = in.readInt();
        in.skipNBytes(len);
        n++;
      }
    } catch (EOFException e) {
      // end of segment
    }
    return n;
  }

  public synchronized long totalBytes() {
    return segmentSizes.values().stream().mapToLong(Long::longValue).sum();
  }

  public long dropped() {
    return dropped.get();
  }

  public long appended() {
    return appended.get();
  }

  /** Why the last append failed, or null when it succeeded (the spool is writable). */
  public String writeError() {
    return writeError;
  }

  /** Bytes of incomplete records skipped at the end of segments (crash, full disk). */
  public long tornBytes() {
    return tornBytes.get();
  }

  /** Incomplete records skipped at the end of segments. */
  public long tornRecords() {
    return tornRecords.get();
  }

  /** Times an unreadable cursor made the spool read again from its oldest segment. */
  public long cursorResets() {
    return cursorResets.get();
  }

  /** Segments left alone because they are of a newer format than this release reads. */
  public long unsupportedSegments() {
    return unsupported.get();
  }

  /** A record read from the spool and the cursor just past it. */
  public record Entry(byte[] bytes, long seq, long offsetAfter) {}

  @Override
  public synchronized void close() throws IOException {
    closeReader();
    try {
      if (writer != null) {
        try {
          writer.force(false);
        } finally {
          writer.close();
        }
      }
    } finally {
      if (lockChannel != null) {
        lockChannel.close(); // releases the lock: the spool may now be adopted
      }
    }
  }
}
