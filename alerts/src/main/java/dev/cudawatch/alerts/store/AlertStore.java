package dev.cudawatch.alerts.store;

import dev.cudawatch.common.wire.Alert;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The latest state of each alert by fingerprint, bounded (oldest entries leave first). */
public final class AlertStore {
  private final int capacity;
  private final LinkedHashMap<String, Alert> byFingerprint;

  public AlertStore(int capacity) {
    this.capacity = capacity;
    this.byFingerprint =
        new LinkedHashMap<>(16, 0.75f, false) {
          private static final long serialVersionUID = 1L;

          @Override
          protected boolean removeEldestEntry(Map.Entry<String, Alert> e) {
            return size() > AlertStore.this.capacity;
          }
        };
  }

  /** Records a state change; returns the previous state of the alert, or null when new. */
  public synchronized Alert put(Alert a) {
    Alert prev = byFingerprint.remove(a.fingerprint());
    byFingerprint.put(a.fingerprint(), a);
    return prev;
  }

  public synchronized List<Alert> all() {
    List<Alert> out = new ArrayList<>(byFingerprint.values());
    out.sort(Comparator.comparing(Alert::startsAt).reversed());
    return out;
  }

  /** One page of alerts, newest first, optionally only {@code firing} or {@code resolved} ones. */
  public synchronized Page page(String state, int offset, int limit) {
    List<Alert> matching =
        all().stream()
            .filter(
                a ->
                    state == null
                        || a.state().name().toLowerCase(java.util.Locale.ROOT).equals(state))
            .toList();
    int from = Math.min(offset, matching.size());
    return new Page(
        List.copyOf(matching.subList(from, Math.min(matching.size(), from + limit))),
        matching.size());
  }

  /** A page of alerts and how many matched in all. */
  public record Page(List<Alert> items, int total) {}

  /** Alerts firing at {@code now} (expired ones are not). */
  public synchronized List<Alert> active(java.time.Instant now) {
    return all().stream().filter(a -> a.activeAt(now)).toList();
  }
}
