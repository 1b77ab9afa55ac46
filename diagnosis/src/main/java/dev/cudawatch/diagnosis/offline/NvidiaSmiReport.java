package dev.cudawatch.diagnosis.offline;

import com.google.re2j.Matcher;
import com.google.re2j.Pattern;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.diagnosis.advice.Advice;
import dev.cudawatch.diagnosis.advice.Advisor;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The health sections of an {@code nvidia-smi -q} report, one GPU at a time: ECC counters
 * (volatile: since the driver loaded; aggregate: the GPU's lifetime), retired pages and remapped
 * rows. The report is a tree told by indentation, and the same line ("DRAM Uncorrectable : 2")
 * means another thing under Volatile and under Aggregate, so it is read as a tree here, not line by
 * line like a log. A GPU whose counters are all zero makes no incident.
 */
public final class NvidiaSmiReport {
  private static final String HEADER = "==============NVSMI LOG==============";
  private static final Pattern GPU =
      Pattern.compile(
          "^GPU ([0-9A-Fa-f]{4,8}):([0-9A-Fa-f]{2}):([0-9A-Fa-f]{2})\\.[0-9A-Fa-f]\\s*$");
  private static final Pattern KEY_VALUE = Pattern.compile("^( *)([^: ][^:]*?)\\s+: ?(.*?)\\s*$");
  private static final Pattern SECTION = Pattern.compile("^( *)([^: ][^:]*?)\\s*$");

  /** Lines kept as an incident's excerpt. */
  private static final int MAX_EXCERPT = 12;

  private final Advisor advisor;
  private final String source;
  private final Instant now;
  private final List<Incident> out = new ArrayList<>();
  private final List<String[]> path = new ArrayList<>(); // {indent, name} of the open sections
  private Gpu gpu;

  public NvidiaSmiReport(Advisor advisor, String source, Instant now) {
    this.advisor = advisor;
    this.source = source;
    this.now = now;
  }

  /** Whether a line opens an {@code nvidia-smi -q} report. */
  public static boolean isHeader(String line) {
    return line.strip().equals(HEADER);
  }

  /** Takes the report's next line ({@code n} counts from 1). */
  public void accept(String line, long n) {
    Matcher g = GPU.matcher(line);
    if (g.matches()) {
      finishGpu();
      String domain = g.group(1);
      gpu = new Gpu();
      gpu.pci =
          (domain.substring(domain.length() - 4) + ":" + g.group(2) + ":" + g.group(3))
              .toLowerCase(Locale.ROOT);
      path.clear();
      return;
    }
    if (gpu == null || line.isBlank()) {
      return;
    }
    Matcher kv = KEY_VALUE.matcher(line);
    if (kv.matches()) {
      close(kv.group(1).length());
      gpu.take(path, kv.group(2), kv.group(3), line, n);
      return;
    }
    Matcher s = SECTION.matcher(line);
    if (s.matches()) {
      close(s.group(1).length());
      path.add(new String[] {String.valueOf(s.group(1).length()), s.group(2)});
    }
  }

  /** The incidents of the whole report, in the order of their lines. */
  public List<Incident> finish() {
    finishGpu();
    return out;
  }

  /** Closes the sections a line at this indentation is not inside. */
  private void close(int indent) {
    while (!path.isEmpty() && Integer.parseInt(path.get(path.size() - 1)[0]) >= indent) {
      path.remove(path.size() - 1);
    }
  }

  private void finishGpu() {
    if (gpu != null) {
      Incident i = gpu.incident();
      if (i != null) {
        out.add(i);
      }
      gpu = null;
    }
  }

  /** One GPU's health counters, as the report gives them ("N/A" leaves one out). */
  private final class Gpu {
    String pci;
    Long volatileUncorrectable;
    Long aggregateUncorrectable;
    Long volatileCorrectable;
    Long aggregateCorrectable;
    Long retiredSbe;
    Long retiredDbe;
    Boolean retiredPending;
    Long remapCorrectable;
    Long remapUncorrectable;
    Boolean remapPending;
    Boolean remapFailure;
    long firstLine;
    final List<String> excerpt = new ArrayList<>();

    void take(List<String[]> at, String key, String value, String line, long n) {
      String top = at.isEmpty() ? "" : at.get(0)[1];
      String scope = at.size() > 1 ? at.get(1)[1] : "";
      String sub = at.size() > 2 ? at.get(2)[1] : ""; // old drivers: Single Bit / Double Bit
      Long count = count(value);
      Boolean yes = yesNo(value);
      boolean bad = false;
      if (top.equals("ECC Errors") && (scope.equals("Volatile") || scope.equals("Aggregate"))) {
        boolean vol = scope.equals("Volatile");
        Boolean uncorrectable = null;
        if (sub.isEmpty()) {
          // Ampere and later: "SRAM Uncorrectable [Parity|SEC-DED]", "DRAM Correctable", ...
          if (key.matches("(?:SRAM|DRAM) Uncorrectable.*")) {
            uncorrectable = true;
          } else if (key.matches("(?:SRAM|DRAM) Correctable")) {
            uncorrectable = false;
          }
        } else if (key.equals("Total")) {
          // before Ampere: the Total of "Single Bit" (corrected) and "Double Bit" (uncorrectable)
          uncorrectable =
              sub.equals("Double Bit") ? Boolean.TRUE : sub.equals("Single Bit") ? false : null;
        }
        if (uncorrectable != null && count != null) {
          if (uncorrectable && vol) {
            volatileUncorrectable = sum(volatileUncorrectable, count);
          } else if (uncorrectable) {
            aggregateUncorrectable = sum(aggregateUncorrectable, count);
          } else if (vol) {
            volatileCorrectable = sum(volatileCorrectable, count);
          } else {
            aggregateCorrectable = sum(aggregateCorrectable, count);
          }
          bad = count > 0;
        }
      } else if (top.equals("Retired Pages") && at.size() == 1) {
        if (key.equals("Single Bit ECC") && count != null) {
          retiredSbe = count;
          bad = count > 0;
        } else if (key.equals("Double Bit ECC") && count != null) {
          retiredDbe = count;
          bad = count > 0;
        } else if (key.startsWith("Pending") && yes != null) {
          retiredPending = yes;
          bad = yes;
        }
      } else if (top.equals("Remapped Rows") && at.size() == 1) {
        if (key.equals("Correctable Error") && count != null) {
          remapCorrectable = count;
          bad = count > 0;
        } else if (key.equals("Uncorrectable Error") && count != null) {
          remapUncorrectable = count;
          bad = count > 0;
        } else if (key.equals("Pending") && yes != null) {
          remapPending = yes;
          bad = yes;
        } else if (key.equals("Remapping Failure Occurred") && yes != null) {
          remapFailure = yes;
          bad = yes;
        }
      }
      if (bad) {
        if (firstLine == 0) {
          firstLine = n;
        }
        if (excerpt.size() < MAX_EXCERPT) {
          excerpt.add(line);
        }
      }
    }

    long uncorrectable() {
      return Math.max(z(volatileUncorrectable), z(aggregateUncorrectable)) + z(retiredDbe);
    }

    Incident incident() {
      if (firstLine == 0) {
        return null; // all zeros (or N/A): a healthy GPU
      }
      String severity;
      List<String> what = new ArrayList<>();
      if (uncorrectable() > 0 || Boolean.TRUE.equals(remapFailure)) {
        severity = "critical";
      } else if (Boolean.TRUE.equals(remapPending) || Boolean.TRUE.equals(retiredPending)) {
        severity = "error";
      } else {
        severity = "warning";
      }
      if (z(volatileUncorrectable) > 0 || z(aggregateUncorrectable) > 0) {
        what.add(
            z(volatileUncorrectable)
                + " uncorrectable ECC errors since the driver loaded, "
                + z(aggregateUncorrectable)
                + " in its lifetime");
      }
      if (z(retiredDbe) > 0) {
        what.add(retiredDbe + " pages retired for double-bit errors");
      }
      if (Boolean.TRUE.equals(remapFailure)) {
        what.add("row remapping failed");
      }
      if (Boolean.TRUE.equals(remapPending)) {
        what.add("a row remap is pending until the GPU is reset");
      }
      if (Boolean.TRUE.equals(retiredPending)) {
        what.add("a page retirement is pending until the GPU is reset");
      }
      if (what.isEmpty()) {
        long corrected = Math.max(z(volatileCorrectable), z(aggregateCorrectable));
        what.add(
            corrected > 0
                ? corrected + " corrected ECC errors"
                : "rows remapped ("
                    + z(remapCorrectable)
                    + " correctable, "
                    + z(remapUncorrectable)
                    + " uncorrectable)");
      }
      Map<String, Object> f = new LinkedHashMap<>();
      f.put("pci", pci);
      put(f, "ecc_volatile_uncorrectable", volatileUncorrectable);
      put(f, "ecc_aggregate_uncorrectable", aggregateUncorrectable);
      put(f, "ecc_volatile_correctable", volatileCorrectable);
      put(f, "ecc_aggregate_correctable", aggregateCorrectable);
      put(f, "retired_pages_sbe", retiredSbe);
      put(f, "retired_pages_dbe", retiredDbe);
      put(f, "retired_pages_pending", retiredPending);
      put(f, "row_remap_correctable", remapCorrectable);
      put(f, "row_remap_uncorrectable", remapUncorrectable);
      put(f, "row_remap_pending", remapPending);
      put(f, "row_remap_failure", remapFailure);
      f.put("framework", "driver");
      Advice a = severity.equals("critical") ? advisor.advise("ecc_error", f) : advice(severity);
      String id =
          String.format(
              "%016x", (source + "@" + firstLine + "|ecc_error").hashCode() & 0xffffffffL);
      return Incident.builder(id, "ecc_error")
          .severity(severity)
          .suspect("hardware")
          .signature("nvidia_smi_query")
          .fields(f)
          .summary("GPU at " + pci + ": " + String.join("; ", what))
          .explanation(a.explanation())
          .nextSteps(a.nextSteps())
          .source(source)
          .line(firstLine)
          .firstRecordId(source + "@" + firstLine)
          .detectedTime(now)
          .excerpt(List.copyOf(excerpt))
          .build();
    }
  }

  /**
   * Advice for what the class's own (an uncorrectable error) does not cover: the memory repaired
   * itself and waits for a reset, or only corrected errors.
   */
  private static Advice advice(String severity) {
    if (severity.equals("error")) {
      return new Advice(
          "The GPU found uncorrectable memory errors and repaired its memory, but the repair (row"
              + " remapping or page retirement) takes effect only after a GPU reset; until then"
              + " jobs on it may fail again.",
          List.of(
              "Drain the GPU, then reset it (nvidia-smi -r) or reboot the node, and check that"
                  + " Pending is No.",
              "Replace the GPU if remapping fails or uncorrectable errors recur."));
    }
    return new Advice(
        "The GPU's memory corrected errors by itself (ECC); nothing was lost. A rising count is an"
            + " early sign of failing memory.",
        List.of(
            "Watch the count (nvidia-smi -q -d ECC,ROW_REMAPPER); drain and test the GPU if it"
                + " keeps rising."));
  }

  private static void put(Map<String, Object> f, String k, Object v) {
    if (v != null) {
      f.put(k, v);
    }
  }

  private static long z(Long v) {
    return v == null ? 0 : v;
  }

  private static Long sum(Long a, long b) {
    return a == null ? b : a + b;
  }

  private static Long count(String v) {
    return v.matches("[0-9]{1,18}") ? Long.parseLong(v) : null;
  }

  private static Boolean yesNo(String v) {
    return v.equals("Yes") ? Boolean.TRUE : v.equals("No") ? Boolean.FALSE : null;
  }
}
