package dev.cudawatch.processor.formats;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.deser.std.StdScalarDeserializer;
import com.fasterxml.jackson.datatype.jsr310.deser.InstantDeserializer;
import java.io.IOException;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDate;

/**
 * Reads the instants the agent writes ({@code 2026-11-22T03:00:00.123Z}) without {@code
 * DateTimeFormatter}, whose parse builds a map of fields and a BigDecimal per instant: half the
 * parse stage's time (bench/results/profile-job.md). Any other form goes to Jackson's own reader.
 */
final class IsoInstants {
  private IsoInstants() {}

  /** {@code yyyy-MM-ddTHH:mm:ss[.f{1,9}]Z}, as {@link Instant#parse} reads it; else null. */
  static Instant parse(String s) {
    int n = s.length();
    if (n < 20 || n > 30 || s.charAt(n - 1) != 'Z') {
      return null;
    }
    if (s.charAt(4) != '-'
        || s.charAt(7) != '-'
        || s.charAt(10) != 'T'
        || s.charAt(13) != ':'
        || s.charAt(16) != ':') {
      return null;
    }
    int year = digits(s, 0, 4);
    int month = digits(s, 5, 2);
    int day = digits(s, 8, 2);
    int hour = digits(s, 11, 2);
    int minute = digits(s, 14, 2);
    int second = digits(s, 17, 2);
    if ((year | month | day | hour | minute | second) < 0
        || hour > 23
        || minute > 59
        || second > 59) {
      return null; // a leap second or a bad field: the general reader decides
    }
    int nanos = 0;
    if (n > 20) {
      int fraction = n - 21; // between '.' and 'Z'
      if (s.charAt(19) != '.' || fraction < 1 || fraction > 9) {
        return null;
      }
      nanos = digits(s, 20, fraction);
      if (nanos < 0) {
        return null;
      }
      for (int i = fraction; i < 9; i++) {
        nanos *= 10;
      }
    }
    long epochDay;
    try {
      epochDay = LocalDate.of(year, month, day).toEpochDay();
    } catch (DateTimeException e) {
      return null;
    }
    return Instant.ofEpochSecond(epochDay * 86_400L + hour * 3600 + minute * 60 + second, nanos);
  }

  /** The decimal value of {@code len} ASCII digits at {@code from}, or -1. */
  private static int digits(String s, int from, int len) {
    int v = 0;
    for (int i = from; i < from + len; i++) {
      int d = s.charAt(i) - '0';
      if (d < 0 || d > 9) {
        return -1;
      }
      v = v * 10 + d;
    }
    return v;
  }

  /** The fast form first, Jackson's {@link InstantDeserializer} for everything else. */
  static final class Deserializer extends StdScalarDeserializer<Instant> {
    private static final long serialVersionUID = 1L;

    Deserializer() {
      super(Instant.class);
    }

    @Override
    public Instant deserialize(JsonParser p, DeserializationContext ctx) throws IOException {
      if (p.currentToken() == JsonToken.VALUE_STRING) {
        Instant t = parse(p.getText());
        if (t != null) {
          return t;
        }
      }
      return InstantDeserializer.INSTANT.deserialize(p, ctx);
    }
  }
}
