package dev.cudawatch.common.gpu;

import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Parses rows of {@code nvidia-smi --query-gpu=... --format=csv}: with a header (any column order,
 * units in the values or the header) or without one (the agent's {@link GpuMemoryQuery#QUERY}).
 */
public final class NvidiaSmiCsv {
  private static final DateTimeFormatter TS =
      DateTimeFormatter.ofPattern("yyyy/MM/dd HH:mm:ss[.SSS]");
  private static final DateTimeFormatter TS_OUT =
      DateTimeFormatter.ofPattern("yyyy/MM/dd HH:mm:ss.SSS");

  private final int timestamp;
  private final int index;
  private final int pci;
  private final int used;
  private final int total;
  private long rows;

  private NvidiaSmiCsv(int timestamp, int index, int pci, int used, int total) {
    this.timestamp = timestamp;
    this.index = index;
    this.pci = pci;
    this.used = used;
    this.total = total;
  }

  /** The agent's headerless rows. */
  public static NvidiaSmiCsv agentFormat() {
    return fromColumns(Arrays.asList(GpuMemoryQuery.QUERY.split(","))).orElseThrow();
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

  public static Optional<NvidiaSmiCsv> fromHeader(String header) {
    return fromColumns(Arrays.asList(header.split(",")));
  }

  private static Optional<NvidiaSmiCsv> fromColumns(List<String> cols) {
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
    return Optional.of(new NvidiaSmiCsv(ts, idx, bus, u, t));
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
        time =
            LocalDateTime.parse(v[timestamp].strip(), TS).toInstant(ZoneOffset.UTC).toEpochMilli();
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

  /** A sample as a row of the agent's headerless format ({@link GpuMemoryQuery#QUERY}). */
  public static String toAgentRow(MemorySample s) {
    return LocalDateTime.ofInstant(java.time.Instant.ofEpochMilli(s.epochMillis()), ZoneOffset.UTC)
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
