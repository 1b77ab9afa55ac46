package dev.cudawatch.ingest.files;

import dev.cudawatch.ingest.framing.CriLineDecoder;
import dev.cudawatch.ingest.framing.FramedLine;
import dev.cudawatch.ingest.framing.LineFramer;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One open file being followed: what was read, what the broker acknowledged. The acknowledged
 * position only moves over an unbroken run of acknowledged lines: after a line failed, later
 * acknowledgements of the same read pass do not move it past that line, and the file is read again
 * from the acknowledged position ({@link #rewindIfFailed}).
 */
public final class TailedFile implements AutoCloseable {
  private static final int HEAD_BYTES = 256;
  private static final AtomicLong SEQ = new AtomicLong();

  Path path;
  final String identity;
  private String sourceId;
  private final FileChannel ch;
  private final int maxLineBytes;
  private LineFramer framer;
  private final AtomicLong criMalformed;
  private CriLineDecoder cri;
  private long readPos;
  private long emittedEnd;
  private final AtomicLong acked = new AtomicLong();
  private volatile String ackedSource;
  private volatile Pass pass = new Pass();
  private long headHash;
  private int headLen;
  private long lastGrowth;
  private long lastRewind = Long.MIN_VALUE / 2;

  /** Lines were handed on since the last quiet marker. */
  private boolean sinceQuiet;

  /** The streams of those lines when the file names them (a CRI log's stdout and stderr). */
  private final java.util.Set<String> quietStreams = new java.util.LinkedHashSet<>(4);

  /** One read pass: a failure caps what its later acknowledgements may move the position to. */
  private static final class Pass {
    volatile long limit = Long.MAX_VALUE;
  }

  TailedFile(Path path, String identity, FilePosition from, int maxLineBytes, long nowMs)
      throws IOException {
    this(path, identity, from, maxLineBytes, nowMs, null);
  }

  /**
   * @param criMalformed non-null when the file is a CRI container log: its lines are decoded by a
   *     {@link CriLineDecoder} counting malformed lines here
   */
  TailedFile(
      Path path,
      String identity,
      FilePosition from,
      int maxLineBytes,
      long nowMs,
      AtomicLong criMalformed)
      throws IOException {
    this.criMalformed = criMalformed;
    this.path = path;
    this.identity = identity;
    this.maxLineBytes = maxLineBytes;
    this.ch = FileIdentity.openRegular(path, identity);
    this.sourceId = from == null ? newSourceId(identity) : from.sourceId();
    this.readPos = from == null ? 0 : from.position();
    this.emittedEnd = readPos;
    this.acked.set(readPos);
    this.ackedSource = sourceId;
    if (from != null) {
      this.headLen = from.headLength();
      this.headHash = from.headHash();
    }
    newFramer(readPos);
    this.lastGrowth = nowMs;
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
    emittedEnd = 0;
    acked.set(0);
    ackedSource = sourceId;
    pass = new Pass();
    headLen = 0;
    sinceQuiet = false;
    quietStreams.clear();
    newFramer(0);
  }

  /** A fresh framer (and CRI decoder) reading from {@code at}. */
  private void newFramer(long at) {
    if (criMalformed == null) {
      framer = new LineFramer(maxLineBytes, true, at);
    } else {
      framer = new LineFramer(maxLineBytes, false, false, at); // the decoder cleans the content
      cri = new CriLineDecoder(maxLineBytes, true, criMalformed);
    }
  }

  /** The framer's lines, through the CRI decoder for a container log. */
  private java.util.function.Consumer<FramedLine> decoded(
      java.util.function.Consumer<FramedLine> out) {
    CriLineDecoder d = cri;
    return d == null ? out : l -> d.accept(l, out);
  }

  /**
   * Reads up to {@code budget} bytes and hands complete lines to the sink.
   *
   * @return bytes read
   */
  long read(ByteBuffer buf, long budget, LineSink sink, long nowMs) throws IOException {
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
      emit(sink, buf.array(), n);
    }
    if (total > 0) {
      lastGrowth = nowMs;
    }
    if (headLen < HEAD_BYTES && readPos > headLen) {
      headLen = (int) Math.min(HEAD_BYTES, readPos);
      headHash = head(headLen);
    }
    return total;
  }

  private void emit(LineSink sink, byte[] b, int n) {
    String src = sourceId;
    Pass p = pass;
    framer.feed(
        b,
        0,
        n,
        decoded(
            l -> {
              emittedEnd = l.end();
              noteForQuiet(l);
              handOn(sink, l, src, p);
            }));
  }

  /**
   * Hands a line on with what its acknowledgement or failure must do; those keep its offsets, not
   * the line, which may wait for the broker a while after it was sent.
   */
  private void handOn(LineSink sink, FramedLine l, String src, Pass p) {
    long start = l.start();
    long end = l.end();
    sink.line(this, l, () -> ack(src, p, end), () -> fail(src, p, start));
  }

  private void noteForQuiet(FramedLine l) {
    sinceQuiet = true;
    if (l.stream() != null && !quietStreams.contains(l.stream()) && quietStreams.size() < 4) {
      quietStreams.add(l.stream());
    }
  }

  /**
   * Once the file has not grown for {@code quietMs} after lines were handed on, hands the sink one
   * quiet marker per stream of those lines, at the end of the last one: the writer finished what it
   * was writing. Nothing while a line is unfinished (no newline yet, an open CRI group).
   */
  void markQuiet(LineSink sink, long nowMs, long quietMs) {
    if (!sinceQuiet
        || nowMs - lastGrowth < quietMs
        || framer.hasPartial()
        || (cri != null && cri.hasPending())) {
      return;
    }
    sinceQuiet = false;
    if (quietStreams.isEmpty()) {
      sink.quiet(this, emittedEnd, null);
    } else {
      for (String stream : quietStreams) {
        sink.quiet(this, emittedEnd, stream);
      }
      quietStreams.clear();
    }
  }

  /** Emits a last unterminated line: the file will not grow any more. */
  void flushPartial(LineSink sink) {
    String src = sourceId;
    Pass p = pass;
    java.util.function.Consumer<FramedLine> out =
        l -> {
          emittedEnd = l.end();
          noteForQuiet(l);
          handOn(sink, l, src, p);
        };
    framer.flush(decoded(out));
    if (cri != null) {
      cri.flush(out);
    }
  }

  private void ack(String src, Pass p, long end) {
    if (src.equals(ackedSource) && end <= p.limit) {
      acked.accumulateAndGet(end, Math::max);
    }
  }

  private void fail(String src, Pass p, long start) {
    if (src.equals(ackedSource)) {
      synchronized (p) {
        p.limit = Math.min(p.limit, start);
      }
    }
  }

  /** True once a line of the current pass failed: the file must be read again from the ack. */
  boolean failed() {
    return pass.limit != Long.MAX_VALUE;
  }

  /**
   * After a failed line: reads again from the acknowledged position in a new pass (the lines sent
   * twice carry the same ids; consumers drop the repeats). Returns true when it rewound.
   */
  boolean rewindIfFailed(long nowMs, long backoffMs) {
    if (!failed() || nowMs - lastRewind < backoffMs) {
      return false;
    }
    lastRewind = nowMs;
    pass = new Pass();
    readPos = acked.get();
    emittedEnd = readPos;
    newFramer(readPos);
    return true;
  }

  /**
   * True when every line handed on was acknowledged and the file has not grown for {@code idleMs}:
   * it can be closed and reopened later from its position without losing anything.
   */
  boolean idle(long nowMs, long idleMs) {
    // an open CRI group keeps the file open: closed, it would wake at once (its size is past the
    // position), and its F line is due any moment
    return nowMs - lastGrowth >= idleMs
        && !failed()
        && acked.get() >= emittedEnd
        && (cri == null || !cri.hasPending());
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
