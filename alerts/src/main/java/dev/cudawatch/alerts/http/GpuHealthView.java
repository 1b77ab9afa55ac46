package dev.cudawatch.alerts.http;

import dev.cudawatch.alerts.store.GpuHealthStore.GpuState;
import dev.cudawatch.common.wire.Action;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** A GPU's health-ledger state as the incident page's template sees it (plain strings). */
final class GpuHealthView {
  private GpuHealthView() {}

  static Map<String, Object> of(GpuState g) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("level", g.ladderLevel());
    m.put(
        "levelText",
        switch (g.ladderLevel()) {
          case 0 -> "0: the driver's own recovery";
          case 1 -> "1: inspect the hardware";
          default -> "2: RMA";
        });
    m.put("escalated", g.ladderLevel() > 0);
    m.put("recommendation", g.recommendation());
    m.put("reason", nz(g.reason()));
    m.put("uuid", nz(g.gpuUuid()));
    m.put("recoveries", g.recoveries());
    m.put("resets", g.resetsSeen());
    m.put("reboots", g.rebootsSeen());
    m.put("incidents", g.incidents());
    m.put("mtbi", mtbi(g.mtbiSeconds()));
    m.put("updated", IncidentView.time(g.updated()));
    m.put("apiLink", "/api/gpus/" + IncidentPages.enc(g.key()));
    List<Map<String, Object>> recent = g.recent().stream().map(GpuHealthView::row).toList();
    m.put("recent", recent);
    return m;
  }

  private static Map<String, Object> row(Action a) {
    Map<String, Object> r = new LinkedHashMap<>();
    r.put("time", IncidentView.time(a.at()));
    r.put("action", a.action());
    r.put("level", a.ladderLevel());
    r.put("xid", a.xid() == null ? "" : a.xid().toString());
    r.put("reason", nz(a.reason()));
    r.put("job", nz(a.job()));
    // always set: a missing key would resolve to the incident's own link in the template
    r.put(
        "link", a.incidentId() == null ? "" : "/incident?id=" + IncidentPages.enc(a.incidentId()));
    return r;
  }

  /** Mean time between incidents for a person: "unknown (one failure)", "3.5 h", "2.0 d". */
  static String mtbi(Double seconds) {
    if (seconds == null || seconds.isNaN()) {
      return "not yet (fewer than two failures)";
    }
    double s = seconds;
    if (s < 120) {
      return String.format(java.util.Locale.ROOT, "%.0f s", s);
    }
    if (s < 7200) {
      return String.format(java.util.Locale.ROOT, "%.1f min", s / 60);
    }
    if (s < 172_800) {
      return String.format(java.util.Locale.ROOT, "%.1f h", s / 3600);
    }
    return String.format(java.util.Locale.ROOT, "%.1f d", s / 86_400);
  }

  private static String nz(String s) {
    return s == null ? "" : s;
  }
}
