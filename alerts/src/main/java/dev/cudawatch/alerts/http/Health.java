package dev.cudawatch.alerts.http;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Named readiness checks; /healthz is 200 only when every one passes. A component may add details
 * (its state, since when, its last error) that /healthz shows beside the verdict.
 */
public final class Health {
  private final Map<String, BooleanSupplier> checks = new LinkedHashMap<>();
  private final Map<String, Supplier<Map<String, Object>>> details = new LinkedHashMap<>();

  public synchronized void register(String name, BooleanSupplier check) {
    checks.put(name, check);
  }

  public synchronized void register(
      String name, BooleanSupplier check, Supplier<Map<String, Object>> detail) {
    checks.put(name, check);
    details.put(name, detail);
  }

  public synchronized Map<String, Boolean> status() {
    Map<String, Boolean> out = new LinkedHashMap<>();
    checks.forEach(
        (k, v) -> {
          boolean ok;
          try {
            ok = v.getAsBoolean();
          } catch (RuntimeException e) {
            ok = false;
          }
          out.put(k, ok);
        });
    return out;
  }

  /** Each component's details, by name (a failing supplier shows its error). */
  public synchronized Map<String, Object> details() {
    Map<String, Object> out = new LinkedHashMap<>();
    details.forEach(
        (k, v) -> {
          try {
            out.put(k, v.get());
          } catch (RuntimeException e) {
            out.put(k, Map.of("error", e.getClass().getSimpleName()));
          }
        });
    return out;
  }

  public boolean healthy() {
    return status().values().stream().allMatch(Boolean::booleanValue);
  }
}
