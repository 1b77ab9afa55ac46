package dev.cudawatch.ingest.files;

import dev.cudawatch.ingest.framing.LineFramer;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.atomic.AtomicLong;

/** One open file being followed: what was read, what the broker acknowledged. */
public final class TailedFile implements AutoCloseable {
  private static final int HEAD_BYTES = 256;

  Path path;
  final String identity;
  private String sourceId;
  private static final java.util.concurrent.atomic.AtomicLong SEQ =
      new java.util.concurrent.atomic.AtomicLong();
  private final FileChannel ch;
  private final int maxLineBytes;
  private LineFramer framer;
  private long readPos;
  private final AtomicLong acked = new AtomicLong();
  private volatile String ackedSource;
  private long headHash;
  private int headLen;

  TailedFile(Path path, String identity, FilePosition from, int maxLineBytes) throws IOException {
    this.path = path;
    this.identity = identity;
    this.maxLineBytes = maxLineBytes;
    this.ch = FileChannel.open(path, StandardOpenOption.READ);
    this.sourceId = from == null ? newSourceId(identity) : from.sourceId();
    this.readPos = from == null ? 0 : from.position();
    this.acked.set(readPos);
    this.ackedSource = sourceId;
    if (from != null) {
      this.headLen = from.headLength();
      this.headHash = from.headHash();
    }
    this.framer = new LineFramer(maxLineBytes, true, readPos);
  }

  public Path path() {
    return path;
  }

  /** Identity of this instance of the source, part of every record id. */
  public String sourceId() {
    return sourceId;
  }

  /** Identity plus when it was first seen: a reused inode gets a new id. */
  static String newSourceId(String identity) {
    return identity
        + "@"
        + Long.toString(System.currentTimeMillis(), 36)
        + "."
        + SEQ.incrementAndGet();
  }

  public long readPosition() {
    return readPos;
  }

  public long ackedPosition() {
    return acked.get();
  }

  long size() throws IOException {
    return ch.size();
  }

  /** True when the file was truncated or its first bytes changed (a reused inode). */
  boolean wasReplaced() throws IOException {
    long size = ch.size();
    if (size < readPos) {
      return true;
    }
    if (headLen > 0) {
      return head(headLen) != headHash;
    }
    return false;
  }

  /** Starts over from byte 0 as a new stream. */
  void restart() {
    sourceId = newSourceId(identity);
    readPos = 0;
    acked.set(0);
    ackedSource = sourceId;
    headLen = 0;
    framer = new LineFramer(maxLineBytes, true, 0);
  }

  /**
   * Reads up to {@code budget} bytes and hands complete lines to the sink.
   *
   * @return bytes read
   */
  long read(ByteBuffer buf, long budget, LineSink sink) throws IOException {
    long total = 0;
    while (total < budget) {
      buf.clear();
      if (budget - total < buf.capacity()) {
        buf.limit((int) (budget - total));
      }
      int n = ch.read(buf, readPos);
      if (n <= 0) {
        break;
      }
      readPos += n;
      total += n;
      String src = sourceId;
      framer.feed(buf.array(), 0, n, l -> sink.line(this, l, () -> ack(src, l.end())));
    }
    if (headLen < HEAD_BYTES && readPos > headLen) {
      headLen = (int) Math.min(HEAD_BYTES, readPos);
      headHash = head(headLen);
    }
    return total;
  }

  /** Emits a last unterminated line: the file will not grow any more. */
  void flushPartial(LineSink sink) {
    String src = sourceId;
    framer.flush(l -> sink.line(this, l, () -> ack(src, l.end())));
  }

  private void ack(String src, long end) {
    if (src.equals(ackedSource)) {
      acked.accumulateAndGet(end, Math::max);
    }
  }

  FilePosition position() {
    return new FilePosition(path.toString(), identity, sourceId, acked.get(), headLen, headHash);
  }

  /** The fingerprint of the first {@code n} bytes of this file. */
  long head(int n) throws IOException {
    return fingerprint(ch, n);
  }

  /** FNV-1a of the first {@code n} bytes of a channel, or 0 when it is shorter. */
  static long fingerprint(FileChannel c, int n) throws IOException {
    ByteBuffer b = ByteBuffer.allocate(n);
    int got = c.read(b, 0);
    if (got < n) {
      return 0;
    }
    long h = 0xcbf29ce484222325L;
    for (int i = 0; i < Math.max(got, 0); i++) {
      h ^= b.get(i);
      h *= 0x100000001b3L;
    }
    return h;
  }

  @Override
  public void close() throws IOException {
    ch.close();
  }
}
