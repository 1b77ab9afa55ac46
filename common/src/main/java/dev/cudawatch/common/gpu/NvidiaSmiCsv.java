package dev.cudawatch.common.gpu;

import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.time.temporal.TemporalAccessor;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Parses rows of {@code nvidia-smi --query-gpu=... --format=csv}: with a header (any column order,
 * units in the values or the header) or without one (the agent's {@link GpuMemoryQuery#QUERY}).
 *
 * <p>nvidia-smi prints its timestamp in the node's local time with no zone ({@code 09:58} in New
 * York is {@code 14:58} UTC), so a parser is made for the zone the rows were written in. Rows the
 * agent ships carry their offset ({@code 2026/11/22 14:58:50.279Z}, {@link #toAgentRow}), and an
 * offset in a row always wins over the parser's zone.
 */
public final class NvidiaSmiCsv {
  private static final DateTimeFormatter TS =
      DateTimeFormatter.ofPattern("yyyy/MM/dd HH:mm:ss[.SSS][XXX]");
  private static final DateTimeFormatter TS_OUT =
      DateTimeFormatter.ofPattern("yyyy/MM/dd HH:mm:ss.SSSXXX");

  private final int timestamp;
  private final int index;
  private final int pci;
  private final int used;
  private final int total;
  private final ZoneId zone;
  private long rows;

  private NvidiaSmiCsv(int timestamp, int index, int pci, int used, int total, ZoneId zone) {
    this.zone = zone;
    this.timestamp = timestamp;
    this.index = index;
    this.pci = pci;
    this.used = used;
    this.total = total;
  }

  /**
   * The agent's headerless rows as shipped: they carry their offset; a row without one (from an
   * agent before offsets were added) is read as UTC, as it was then.
   */
  public static NvidiaSmiCsv agentFormat() {
    return agentFormat(ZoneOffset.UTC);
  }

  /** The sampler's headerless rows, as nvidia-smi prints them on a node in {@code zone}. */
  public static NvidiaSmiCsv agentFormat(ZoneId zone) {
    return fromColumns(Arrays.asList(GpuMemoryQuery.QUERY.split(",")), zone).orElseThrow();
  }

  /** True when a line is an nvidia-smi CSV header with memory columns. */
  public static boolean isHeader(String line) {
    // a header is column names only: a log line that quotes nvidia-smi's --query-gpu argument
    // (a tool reporting a failed nvidia-smi call) has quotes, '=' or ':' in it
    return line.contains("memory.used")
        && line.contains("memory.total")
        && line.contains(",")
        && line.indexOf('=') < 0
        && line.indexOf(':') < 0
        && line.indexOf('\'') < 0
        && line.indexOf('"') < 0;
  }

  /**
   * A parser for the rows under {@code header}, written on a node whose local time zone is {@code
   * zone} (nvidia-smi's timestamps carry none).
   */
  public static Optional<NvidiaSmiCsv> fromHeader(String header, ZoneId zone) {
    return fromColumns(Arrays.asList(header.split(",")), zone);
  }

  private static Optional<NvidiaSmiCsv> fromColumns(List<String> cols, ZoneId zone) {
    int ts = -1;
    int idx = -1;
    int bus = -1;
    int u = -1;
    int t = -1;
    for (int i = 0; i < cols.size(); i++) {
      String c = cols.get(i).strip().toLowerCase(Locale.ROOT);
      if (c.startsWith("timestamp")) {
        ts = i;
      } else if (c.equals("index")) {
        idx = i;
      } else if (c.startsWith("pci.bus_id")) {
        bus = i;
      } else if (c.startsWith("memory.used")) {
        u = i;
      } else if (c.startsWith("memory.total")) {
        t = i;
      }
    }
    if (u < 0 || t < 0) {
      return Optional.empty();
    }
    return Optional.of(new NvidiaSmiCsv(ts, idx, bus, u, t, zone));
  }

  /** Parses one row, or empty when it is not a sample (a header, a blank or a broken line). */
  public Optional<MemorySample> parse(String line) {
    String[] v = line.split(",");
    int need = Math.max(Math.max(used, total), Math.max(index, Math.max(pci, timestamp)));
    if (v.length <= need) {
      return Optional.empty();
    }
    Long u = mib(v[used]);
    Long t = mib(v[total]);
    if (u == null || t == null) {
      return Optional.empty();
    }
    rows++;
    long time = rows * 1000; // without timestamps, assume one sample a second
    if (timestamp >= 0) {
      try {
        time = instant(v[timestamp].strip()).toEpochMilli();
      } catch (DateTimeParseException e) {
        return Optional.empty();
      }
    }
    int gpu = 0;
    if (index >= 0) {
      try {
        gpu = Integer.parseInt(v[index].strip());
      } catch (NumberFormatException e) {
        return Optional.empty();
      }
    }
    return Optional.of(
        new MemorySample(time, gpu, pci >= 0 ? kernelPci(v[pci]) : null, u << 20, t << 20));
  }

  /** A timestamp with its offset, or a local one read in this parser's zone. */
  private Instant instant(String text) {
    TemporalAccessor t = TS.parseBest(text, OffsetDateTime::from, LocalDateTime::from);
    return t instanceof OffsetDateTime o
        ? o.toInstant()
        : ((LocalDateTime) t).atZone(zone).toInstant();
  }

  /**
   * A sample as a row of the agent's headerless format ({@link GpuMemoryQuery#QUERY}), its time in
   * UTC with the offset written out, so no reader has to guess the node's zone.
   */
  public static String toAgentRow(MemorySample s) {
    return OffsetDateTime.ofInstant(Instant.ofEpochMilli(s.epochMillis()), ZoneOffset.UTC)
            .format(TS_OUT)
        + ", "
        + s.gpu()
        + ", "
        + (s.pci() == null ? "" : s.pci())
        + ", "
        + (s.usedBytes() >> 20)
        + ", "
        + (s.totalBytes() >> 20);
  }

  private static Long mib(String s) {
    String t = s.strip();
    if (t.endsWith("MiB")) {
      t = t.substring(0, t.length() - 3).strip();
    }
    try {
      return Long.parseLong(t);
    } catch (NumberFormatException e) {
      return null;
    }
  }

  /** {@code 00000000:00:06.0} (nvidia-smi) to {@code 0000:00:06} (the kernel log's form). */
  public static String kernelPci(String busId) {
    String b = busId.strip().toLowerCase(Locale.ROOT);
    int dot = b.lastIndexOf('.');
    if (dot > 0) {
      b = b.substring(0, dot);
    }
    String[] parts = b.split(":");
    if (parts.length == 3 && parts[0].length() > 4) {
      parts[0] = parts[0].substring(parts[0].length() - 4);
    }
    return String.join(":", parts);
  }
}
