package dev.cudawatch.diagnosis.advice;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.Locale;
import java.util.Set;

/** Turns the text a pattern captured into typed taxonomy values (bytes, milliseconds, integers). */
public final class FieldValues {
  private static final Set<String> INTEGER_FIELDS =
      Set.of(
          "gpu",
          "rank",
          "local_rank",
          "xid",
          "pid",
          "seq_num",
          "cuda_error_code",
          "kernel_line",
          "sanitizer_errors",
          "driver_version",
          "required",
          "hardware_limit",
          "anon_rss_kb",
          "last_enqueued",
          "last_completed",
          "dump_from_rank",
          "exit_code",
          "library_status_code");

  private FieldValues() {}

  /** The typed value of {@code raw} for field {@code name}; text stays text. */
  public static Object typed(String name, String raw) {
    if (name.endsWith("_bytes")) {
      Long b = parseBytes(raw);
      return b == null ? raw : b;
    }
    if (name.endsWith("_ms") || INTEGER_FIELDS.contains(name)) {
      Long n = parseLong(raw);
      return n == null ? raw : n;
    }
    return raw.length() > 500 ? raw.substring(0, 500) : raw;
  }

  /** {@code "200.00 GiB"}, {@code "518.00 MiB"}, {@code "0 bytes"}, {@code "1,024"} to bytes. */
  public static Long parseBytes(String s) {
    String t = s.strip().replace(",", "");
    int i = 0;
    while (i < t.length() && (Character.isDigit(t.charAt(i)) || t.charAt(i) == '.')) {
      i++;
    }
    if (i == 0) {
      return null;
    }
    double value;
    try {
      value = Double.parseDouble(t.substring(0, i));
    } catch (NumberFormatException e) {
      return null;
    }
    String unit = t.substring(i).strip().toLowerCase(Locale.ROOT);
    double scale =
        switch (unit) {
          case "", "b", "byte", "bytes" -> 1;
          case "k", "kb", "kib" -> 1L << 10;
          case "m", "mb", "mib" -> 1L << 20;
          case "g", "gb", "gib" -> 1L << 30;
          case "t", "tb", "tib" -> 1L << 40;
          case "p", "pb", "pib" -> 1L << 50;
          case "e", "eb", "eib" -> 1L << 60;
          default -> -1;
        };
    if (scale < 0) {
      return null;
    }
    return Math.round(value * scale);
  }

  public static Long parseLong(String s) {
    String t = s.strip().replace(",", "");
    try {
      return Long.parseLong(t);
    } catch (NumberFormatException e) {
      return null;
    }
  }

  /** Bytes as a person reads them: {@code 200.00 GiB}. */
  public static String humanBytes(long bytes) {
    String[] units = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = bytes;
    int u = 0;
    while (Math.abs(v) >= 1024 && u < units.length - 1) {
      v /= 1024;
      u++;
    }
    if (u == 0) {
      return bytes + " bytes";
    }
    // what String.format("%.2f") prints (half-up on the shortest decimal form) without its parser
    return new BigDecimal(Double.toString(v)).setScale(2, RoundingMode.HALF_UP).toPlainString()
        + " "
        + units[u];
  }
}
