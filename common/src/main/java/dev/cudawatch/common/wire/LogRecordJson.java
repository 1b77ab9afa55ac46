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
 */
public final class LogRecordJson {
  private final Buffer out = new Buffer();
  private final JsonGenerator gen;
  private final char[] time = new char[40];

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
      string("host", r.host());
      string("job", r.job());
      number("rank", r.rank());
      number("local_rank", r.localRank());
      number("gpu", r.gpu());
      string("kind", r.kind().name());
      string("stream", r.stream());
      string("source", r.source());
      string("source_id", r.sourceId());
      gen.writeNumberField("offset", r.offset());
      instant("event_time", r.eventTime());
      instant("ingest_time", r.ingestTime());
      string("text", r.text());
      gen.writeNumberField("line_count", r.lineCount());
      string("raw", r.raw());
      string("gpu_uuid", r.gpuUuid());
      if (r.attribution() != null) {
        gen.writeObjectFieldStart("attribution");
        for (Map.Entry<String, String> e : r.attribution().entrySet()) {
          gen.writeStringField(e.getKey(), e.getValue());
        }
        gen.writeEndObject();
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
    int n = IsoInstant.format(t, time);
    if (n < 0) {
      gen.writeString(DateTimeFormatter.ISO_INSTANT.format(t)); // a year outside 0000..9999
    } else {
      gen.writeString(time, 0, n);
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
