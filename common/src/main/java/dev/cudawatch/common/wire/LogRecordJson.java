package dev.cudawatch.common.wire;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.util.Arrays;
import java.util.Map;

/**
 * Writes a {@link LogRecord} as the bytes {@link WireJson}'s mapper writes for it, field by field
 * through one streaming generator kept for the encoder's life: the agent writes one record per
 * line, and the mapper's path (a serializer provider, a generator, its context and a growing buffer
 * per record, instants through a {@code DateTimeFormatter}) was most of its allocation. Not
 * thread-safe: one per thread ({@link WireJson#toBytes(LogRecord)}).
 *
 * <p>The fields a file's lines share (host to source_id, and gpu_uuid with the attribution) are
 * written once and their bytes copied for the next record while they stay equal: a tailed file
 * gives runs of lines of one source, and escaping its path and attribution per line was a good part
 * of the agent's JSON time.
 */
public final class LogRecordJson {
  private final Buffer out = new Buffer();
  private final JsonGenerator gen;
  private final char[] time = new char[40];
  private Instant timeOf;
  private int timeLength;
  private final Segment head = new Segment(9);
  private final Segment tail = new Segment(2);

  public LogRecordJson() {
    try {
      gen = WireJson.mapper().getFactory().createGenerator(out, JsonEncoding.UTF8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    gen.setRootValueSeparator(null); // records are written one after another into one stream
  }

  /** The record's JSON, byte for byte as {@code WireJson.mapper().writeValueAsBytes(r)}. */
  public byte[] encode(LogRecord r) {
    out.reset();
    try {
      // the record's components in order, null ones left out (the mapper's NON_NULL inclusion)
      gen.writeStartObject();
      gen.writeNumberField("v", r.v());
      string("id", r.id());
      Object[] h = head.probe;
      h[0] = r.host();
      h[1] = r.job();
      h[2] = r.rank();
      h[3] = r.localRank();
      h[4] = r.gpu();
      h[5] = r.kind();
      h[6] = r.stream();
      h[7] = r.source();
      h[8] = r.sourceId();
      if (!head.copied()) {
        string("host", r.host());
        string("job", r.job());
        number("rank", r.rank());
        number("local_rank", r.localRank());
        number("gpu", r.gpu());
        string("kind", r.kind().name());
        string("stream", r.stream());
        string("source", r.source());
        string("source_id", r.sourceId());
        head.keep();
      }
      gen.writeNumberField("offset", r.offset());
      instant("event_time", r.eventTime());
      instant("ingest_time", r.ingestTime());
      string("text", r.text());
      gen.writeNumberField("line_count", r.lineCount());
      string("raw", r.raw());
      tail.probe[0] = r.gpuUuid();
      tail.probe[1] = r.attribution();
      if (!tail.copied()) {
        string("gpu_uuid", r.gpuUuid());
        if (r.attribution() != null) {
          gen.writeObjectFieldStart("attribution");
          for (Map.Entry<String, String> e : r.attribution().entrySet()) {
            gen.writeStringField(e.getKey(), e.getValue());
          }
          gen.writeEndObject();
        }
        tail.keep();
      }
      gen.writeEndObject();
      gen.flush();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toByteArray();
  }

  private void string(String name, String value) throws IOException {
    if (value != null) {
      gen.writeStringField(name, value);
    }
  }

  private void number(String name, Integer value) throws IOException {
    if (value != null) {
      gen.writeNumberField(name, value.intValue());
    }
  }

  private void instant(String name, Instant t) throws IOException {
    if (t == null) {
      return;
    }
    gen.writeFieldName(name);
    // a line's ingest time is mostly its event time: formatted once
    int n = t.equals(timeOf) ? timeLength : IsoInstant.format(t, time);
    timeOf = t;
    timeLength = n;
    if (n < 0) {
      gen.writeString(DateTimeFormatter.ISO_INSTANT.format(t)); // a year outside 0000..9999
    } else {
      gen.writeString(time, 0, n);
    }
  }

  /**
   * A run of fields whose bytes are kept while their values stay equal. Every field after "v" is
   * written with its leading comma, so the bytes stand on their own between any two fields; the
   * generator's context needs no update, as the object's first field is already written.
   */
  private final class Segment {
    /** The values of this record, filled by the caller before {@link #copied}. */
    Object[] probe;

    private Object[] key;
    private byte[] bytes;
    private int start;

    Segment(int fields) {
      probe = new Object[fields];
      key = new Object[fields];
    }

    /** Whether the probe's bytes were kept and are now written; else the caller writes them. */
    boolean copied() throws IOException {
      gen.flush();
      if (bytes != null && same()) {
        out.write(bytes, 0, bytes.length);
        return true;
      }
      start = out.len;
      return false;
    }

    /**
     * Strings, numbers and kinds by value; a map only if it is the same one, as two equal maps may
     * iterate in different orders (a file's attribution map is one instance for all its lines).
     */
    private boolean same() {
      for (int i = 0; i < key.length; i++) {
        Object k = key[i];
        Object p = probe[i];
        if (k != p && (k == null || k instanceof Map || !k.equals(p))) {
          return false;
        }
      }
      return true;
    }

    /** Keeps what the caller wrote since {@link #copied} missed, for the same values next time. */
    void keep() throws IOException {
      gen.flush();
      int n = out.len - start;
      // a segment longer than a path and an attribution's worth is not worth keeping
      if (n > 4096) {
        bytes = null;
        return;
      }
      bytes = Arrays.copyOfRange(out.buf, start, out.len);
      Object[] k = key;
      key = probe;
      probe = k;
    }
  }

  /** An output stream over one array kept between records. */
  private static final class Buffer extends OutputStream {
    private byte[] buf = new byte[1024];
    private int len;

    void reset() {
      len = 0;
      if (buf.length > 64 * 1024) {
        buf = new byte[1024]; // one huge record must not pin its buffer for the thread's life
      }
    }

    byte[] toByteArray() {
      return Arrays.copyOf(buf, len);
    }

    @Override
    public void write(int b) {
      ensure(1);
      buf[len++] = (byte) b;
    }

    @Override
    public void write(byte[] b, int off, int n) {
      ensure(n);
      System.arraycopy(b, off, buf, len, n);
      len += n;
    }

    private void ensure(int n) {
      if (len + n > buf.length) {
        buf = Arrays.copyOf(buf, Math.max(buf.length * 2, len + n));
      }
    }
  }
}
