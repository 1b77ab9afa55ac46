package dev.cudawatch.common.wire;

import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDate;

/**
 * The wire's instants without {@code DateTimeFormatter}: the agent formats two per shipped line,
 * the job reads two per record, and the formatter's objects (a field map and a BigDecimal per
 * parse) were half of each (bench/results/profile-agent.md, profile-job.md). Formats as {@link
 * java.time.format.DateTimeFormatter#ISO_INSTANT} does (seconds always, the fraction in groups of
 * three digits, {@code Z}); reads that form, and leaves every other to the general reader.
 */
public final class IsoInstant {
  private static final long MIN = LocalDate.of(0, 1, 1).toEpochDay() * 86_400L;
  private static final long MAX = LocalDate.of(10_000, 1, 1).toEpochDay() * 86_400L;

  private IsoInstant() {}

  /**
   * Writes {@code t} into {@code out} (at least 30 chars) and returns the length, or -1 for a year
   * outside 0000..9999, which the caller formats the slow way.
   */
  static int format(Instant t, char[] out) {
    long secs = t.getEpochSecond();
    if (secs < MIN || secs >= MAX) {
      return -1;
    }
    long day = Math.floorDiv(secs, 86_400L);
    int sod = (int) Math.floorMod(secs, 86_400L);
    LocalDate d = LocalDate.ofEpochDay(day); // no allocation once inlined (escape analysis)
    int n = 0;
    n = digits(out, n, d.getYear(), 4);
    out[n++] = '-';
    n = digits(out, n, d.getMonthValue(), 2);
    out[n++] = '-';
    n = digits(out, n, d.getDayOfMonth(), 2);
    out[n++] = 'T';
    n = digits(out, n, sod / 3600, 2);
    out[n++] = ':';
    n = digits(out, n, sod / 60 % 60, 2);
    out[n++] = ':';
    n = digits(out, n, sod % 60, 2);
    int nano = t.getNano();
    if (nano > 0) {
      out[n++] = '.';
      int div = 100_000_000;
      for (int i = 0; nano > 0 || i % 3 != 0; i++) {
        int digit = nano / div;
        out[n++] = (char) ('0' + digit);
        nano -= digit * div;
        div /= 10;
      }
    }
    out[n++] = 'Z';
    return n;
  }

  private static int digits(char[] out, int at, int value, int width) {
    for (int i = width - 1; i >= 0; i--) {
      out[at + i] = (char) ('0' + value % 10);
      value /= 10;
    }
    return at + width;
  }

  /** {@code yyyy-MM-ddTHH:mm:ss[.f{1,9}]Z}, as {@link Instant#parse} reads it; else null. */
  public static Instant parse(String s) {
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
    int year = parsedDigits(s, 0, 4);
    int month = parsedDigits(s, 5, 2);
    int day = parsedDigits(s, 8, 2);
    int hour = parsedDigits(s, 11, 2);
    int minute = parsedDigits(s, 14, 2);
    int second = parsedDigits(s, 17, 2);
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
      nanos = parsedDigits(s, 20, fraction);
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
  private static int parsedDigits(String s, int from, int len) {
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
}
