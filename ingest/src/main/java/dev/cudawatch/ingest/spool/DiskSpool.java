package dev.cudawatch.ingest.spool;

import dev.cudawatch.common.io.AtomicFiles;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A bounded, durable queue of records on disk, for sources that cannot be read again (a job's
 * pipes, stdin, the kernel log): records are appended to segment files ({@code [length][bytes]})
 * and read back in order; the read cursor is checkpointed crash-safely. When the spool would pass
 * its size limit, the oldest segment is deleted and its unsent records are counted as dropped,
 * never silently.
 */
public final class DiskSpool implements AutoCloseable {
  private static final String SUFFIX = ".seg";

  private final Path dir;
  private final long maxBytes;
  private final long segmentBytes;
  private final TreeMap<Long, Long> segmentSizes = new TreeMap<>(); // seq -> bytes
  private final TreeMap<Long, Long> segmentRecords = new TreeMap<>(); // seq -> records written
  private final AtomicLong dropped = new AtomicLong();
  private final AtomicLong appended = new AtomicLong();
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
    this.dir = Files.createDirectories(dir);
    this.maxBytes = maxBytes;
    this.segmentBytes = segmentBytes;
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, "*" + SUFFIX)) {
      for (Path p : ds) {
        long seq = Long.parseLong(p.getFileName().toString().replace(SUFFIX, ""));
        segmentSizes.put(seq, Files.size(p));
        segmentRecords.put(seq, countRecords(p));
      }
    }
    long[] cursor = readCursor();
    readSeq = cursor[0];
    readOffset = cursor[1];
    committedSeq = readSeq;
    committedOffset = readOffset;
    writeSeq = segmentSizes.isEmpty() ? Math.max(readSeq, 1) : segmentSizes.lastKey() + 1;
    if (segmentSizes.isEmpty() || segmentSizes.firstKey() > readSeq) {
      readSeq = segmentSizes.isEmpty() ? writeSeq : segmentSizes.firstKey();
      readOffset = 0;
    }
    openWriter();
  }

  private Path segment(long seq) {
    return dir.resolve(String.format("%020d%s", seq, SUFFIX));
  }

  private void openWriter() throws IOException {
    writer =
        FileChannel.open(
            segment(writeSeq),
            StandardOpenOption.CREATE,
            StandardOpenOption.WRITE,
            StandardOpenOption.APPEND);
    writeSize = writer.size();
    segmentSizes.put(writeSeq, writeSize);
    segmentRecords.putIfAbsent(writeSeq, 0L);
  }

  /** Appends a record; may delete the oldest segment to stay within the limit. */
  public synchronized void append(byte[] record) throws IOException {
    if (writeSize > 0 && writeSize + record.length + 4 > segmentBytes) {
      writer.force(false);
      writer.close();
      writeSeq++;
      openWriter();
    }
    header.clear();
    header.putInt(record.length).flip();
    writer.write(new ByteBuffer[] {header, ByteBuffer.wrap(record)});
    writeSize += record.length + 4;
    segmentSizes.put(writeSeq, writeSize);
    segmentRecords.merge(writeSeq, 1L, Long::sum);
    appended.incrementAndGet();
    while (totalBytes() > maxBytes && segmentSizes.size() > 1) {
      dropOldest();
    }
    notifyAll();
  }

  /** Makes appended records durable. */
  public synchronized void sync() throws IOException {
    writer.force(false);
  }

  private void dropOldest() throws IOException {
    long seq = segmentSizes.firstKey();
    long records = segmentRecords.getOrDefault(seq, 0L);
    long unread =
        seq == readSeq ? Math.max(0, records - readRecordsInSegment) : seq > readSeq ? records : 0;
    dropped.addAndGet(unread);
    segmentSizes.remove(seq);
    segmentRecords.remove(seq);
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
      if (readOffset + 4 <= size) {
        openReader();
        DataInputStream in = new DataInputStream(reader);
        int len;
        byte[] b;
        try {
          len = in.readInt();
          if (len < 0 || readOffset + 4 + len > size) {
            closeReader(); // not a complete record: reopen at the cursor next time
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
        Files.deleteIfExists(segment(s));
      }
    }
    AtomicFiles.write(
        dir.resolve("cursor"), (seq + " " + offset + "\n").getBytes(StandardCharsets.US_ASCII));
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
      if (e.getKey() == readSeq ? readOffset < e.getValue() : e.getValue() > 0) {
        return true;
      }
    }
    return false;
  }

  private long[] readCursor() throws IOException {
    Path c = dir.resolve("cursor");
    if (!Files.exists(c)) {
      return new long[] {0, 0};
    }
    String[] parts = Files.readString(c).strip().split(" ");
    return new long[] {Long.parseLong(parts[0]), Long.parseLong(parts[1])};
  }

  private static long countRecords(Path p) throws IOException {
    long n = 0;
    try (DataInputStream in =
        new DataInputStream(new java.io.BufferedInputStream(Files.newInputStream(p)))) {
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

  /** A record read from the spool and the cursor just past it. */
  public record Entry(byte[] bytes, long seq, long offsetAfter) {}

  @Override
  public synchronized void close() throws IOException {
    closeReader();
    writer.force(false);
    writer.close();
  }
}
