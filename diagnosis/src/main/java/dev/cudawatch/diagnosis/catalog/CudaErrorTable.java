package dev.cudawatch.diagnosis.catalog;

import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/** Looks CUDA errors up by name, number or text. */
public final class CudaErrorTable {
  private final Map<String, CudaError> byName = new HashMap<>();
  private final Map<Integer, CudaError> byCode = new HashMap<>();
  private final Map<String, CudaError> byText = new HashMap<>();
  private final List<CudaError> all;

  public CudaErrorTable(List<CudaError> errors) {
    this.all = List.copyOf(errors);
    for (CudaError e : errors) {
      if (e.runtime() != null) {
        byName.put(e.runtime(), e);
      }
      if (e.driver() != null) {
        byName.put(e.driver(), e);
      }
      byCode.putIfAbsent(e.code(), e);
      byText.putIfAbsent(normalise(e.text()), e);
    }
  }

  public Optional<CudaError> byName(String name) {
    return Optional.ofNullable(byName.get(name));
  }

  public Optional<CudaError> byCode(int code) {
    return Optional.ofNullable(byCode.get(code));
  }

  /** Exact text first, then the longest known text the given one starts with. */
  public Optional<CudaError> byText(String text) {
    String t = normalise(text);
    CudaError e = byText.get(t);
    if (e != null) {
      return Optional.of(e);
    }
    CudaError best = null;
    for (CudaError c : all) {
      String ct = normalise(c.text());
      if (t.startsWith(ct) && (best == null || ct.length() > normalise(best.text()).length())) {
        best = c;
      }
    }
    return Optional.ofNullable(best);
  }

  public List<CudaError> all() {
    return all;
  }

  private static String normalise(String s) {
    String t = s.strip().toLowerCase(Locale.ROOT);
    while (t.endsWith(".")) {
      t = t.substring(0, t.length() - 1);
    }
    return t;
  }
}
