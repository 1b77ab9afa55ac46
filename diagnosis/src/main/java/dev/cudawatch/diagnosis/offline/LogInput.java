package dev.cudawatch.diagnosis.offline;

import io.airlift.compress.zstd.ZstdInputStream;
import java.io.BufferedInputStream;
import java.io.Closeable;
import java.io.EOFException;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PushbackInputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.zip.GZIPInputStream;
import java.util.zip.ZipException;

/**
 * A log as text, whatever it was stored as. Compression is told by magic bytes, not the name (a
 * rotated {@code syslog.1} may be gzip, a {@code .log} may be zstd): gzip (every member of a
 * concatenated file) and zstd (every frame) are decompressed as a stream. A binary file (a core
 * dump, a checkpoint, a tarball) is refused before a line is classified. Corrupt compressed data
 * ends the text where it starts; {@link #failIfCorrupt} then reports it, with what was read before.
 */
public final class LogInput implements Closeable {
  /** How the bytes are stored. */
  public enum Format {
    PLAIN,
    GZIP,
    ZSTD
  }

  /** The bytes looked at to tell a log from a binary file. */
  static final int SNIFF_BYTES = 1024;

  private final CountingStream raw;
  private final Format format;
  private final InputStream text;
  private IOException corruption;
  private long corruptAt;

  private LogInput(InputStream in) throws IOException {
    this.raw = new CountingStream(in);
    BufferedInputStream buffered = new BufferedInputStream(raw, 1 << 16);
    this.format = formatOf(peek(buffered, 4));
    InputStream decoded;
    try {
      decoded =
          switch (format) {
            case PLAIN -> buffered;
            // GZIPInputStream asks available() whether another member follows; on a pipe that can
            // say 0 before the next member arrives, so ask a stream that waits for a byte or the
            // end
            case GZIP -> new GZIPInputStream(new WaitingAvailable(buffered), 1 << 16);
            case ZSTD -> new ZstdInputStream(buffered);
          };
    } catch (IOException e) {
      raw.rethrowIfFailed();
      close();
      throw corrupt(e, raw.count());
    }
    BufferedInputStream textIn =
        new BufferedInputStream(format == Format.PLAIN ? decoded : new Guard(decoded), 1 << 16);
    byte[] head = peek(textIn, SNIFF_BYTES);
    if (TextSniffer.isBinary(head)) {
      close();
      throw new BinaryLogException();
    }
    this.text = textIn;
  }

  /** Opens a file. */
  public static LogInput open(Path path) throws IOException {
    InputStream in = Files.newInputStream(path);
    try {
      return new LogInput(in);
    } catch (IOException | RuntimeException e) {
      in.close();
      throw e;
    }
  }

  /** Reads a stream (stdin), which the returned input closes. */
  public static LogInput of(InputStream in) throws IOException {
    return new LogInput(in);
  }

  /**
   * Whether a file must be read as one stream, not in chunks at offsets: it is compressed, or it is
   * binary and is refused whole.
   */
  public static boolean needsStream(Path path) throws IOException {
    try (InputStream in = Files.newInputStream(path)) {
      byte[] head = in.readNBytes(SNIFF_BYTES);
      return formatOf(head) != Format.PLAIN || TextSniffer.isBinary(head);
    }
  }

  /** The log's text, decompressed. */
  public InputStream text() {
    return text;
  }

  public Format format() {
    return format;
  }

  /** Bytes of the file read so far (compressed bytes for a compressed file): for progress. */
  public long bytesRead() {
    return raw.count();
  }

  /**
   * Throws, with {@code incidents} (those of the text before the corruption), when corrupt
   * compressed data ended the text early.
   */
  public void failIfCorrupt(List<dev.cudawatch.common.wire.Incident> incidents)
      throws CorruptLogException {
    if (corruption != null) {
      CorruptLogException e = corrupt(corruption, corruptAt);
      throw e.withIncidents(incidents);
    }
  }

  private CorruptLogException corrupt(Exception cause, long at) {
    String what = format == Format.ZSTD ? "zstd" : "gzip";
    String reason =
        cause instanceof EOFException
            ? "truncated"
            : cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage();
    return new CorruptLogException(
        "corrupt " + what + " data near byte " + at + " (" + reason + "); read up to there", cause);
  }

  @Override
  public void close() throws IOException {
    raw.close();
  }

  static Format formatOf(byte[] head) {
    if (head.length >= 2 && (head[0] & 0xff) == 0x1f && (head[1] & 0xff) == 0x8b) {
      return Format.GZIP;
    }
    if (head.length >= 4
        && (head[0] & 0xff) == 0x28
        && (head[1] & 0xff) == 0xb5
        && (head[2] & 0xff) == 0x2f
        && (head[3] & 0xff) == 0xfd) {
      return Format.ZSTD;
    }
    return Format.PLAIN;
  }

  /** Up to {@code n} bytes from the start of {@code in}, left unread. */
  private static byte[] peek(BufferedInputStream in, int n) throws IOException {
    in.mark(n);
    byte[] head = in.readNBytes(n);
    in.reset();
    return head;
  }

  /**
   * Ends the text at corrupt compressed data instead of failing the whole read, so the incidents
   * before it are kept; a failure of the file itself still fails the read.
   */
  private final class Guard extends FilterInputStream {
    Guard(InputStream in) {
      super(in);
    }

    @Override
    public int read() throws IOException {
      byte[] one = new byte[1];
      return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      if (corruption != null) {
        return -1;
      }
      try {
        return in.read(b, off, len);
      } catch (ZipException | EOFException e) {
        return ended(e);
      } catch (IOException e) {
        raw.rethrowIfFailed();
        return ended(e);
      } catch (RuntimeException e) { // the zstd decoder's MalformedInputException and kin
        return ended(new IOException(e.getMessage(), e));
      }
    }

    private int ended(IOException e) throws IOException {
      raw.rethrowIfFailed();
      corruption = e;
      corruptAt = raw.count();
      return -1;
    }
  }

  /** Counts the file's bytes and remembers whether reading the file itself failed. */
  private static final class CountingStream extends FilterInputStream {
    private long count;
    private IOException failure;

    CountingStream(InputStream in) {
      super(in);
    }

    @Override
    public int read() throws IOException {
      try {
        int b = in.read();
        if (b >= 0) {
          count++;
        }
        return b;
      } catch (IOException e) {
        failure = e;
        throw e;
      }
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      try {
        int n = in.read(b, off, len);
        if (n > 0) {
          count += n;
        }
        return n;
      } catch (IOException e) {
        failure = e;
        throw e;
      }
    }

    long count() {
      return count;
    }

    void rethrowIfFailed() throws IOException {
      if (failure != null) {
        throw failure;
      }
    }
  }

  /** {@code available()} is 0 only at the end: it waits for the next byte when none is buffered. */
  private static final class WaitingAvailable extends PushbackInputStream {
    WaitingAvailable(InputStream in) {
      super(in, 1);
    }

    @Override
    public int available() throws IOException {
      int n = super.available();
      if (n > 0) {
        return n;
      }
      int b = read();
      if (b < 0) {
        return 0;
      }
      unread(b);
      return 1;
    }
  }
}
