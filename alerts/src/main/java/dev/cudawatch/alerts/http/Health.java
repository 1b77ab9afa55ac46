package dev.cudawatch.alerts.http;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.BooleanSupplier;

/** Named readiness checks; /healthz is 200 only when every one passes. */
public final class Health {
  private final Map<String, BooleanSupplier> checks = new LinkedHashMap<>();

  public synchronized void register(String name, BooleanSupplier check) {
    checks.put(name, check);
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

  public boolean healthy() {
    return status().values().stream().allMatch(Boolean::booleanValue);
  }
}
