package dev.cudawatch.common.wire;

import java.time.Instant;
import java.time.LocalDate;

/**
 * Formats an instant as {@link java.time.format.DateTimeFormatter#ISO_INSTANT} does (seconds
 * always, the fraction in groups of three digits, {@code Z}) into a caller's array, without the
 * formatter's objects and strings: two of them per shipped line.
 */
final class IsoInstant {
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
}
