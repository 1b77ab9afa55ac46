package dev.cudawatch.common.wire;

import java.time.Instant;
import java.util.Map;
import java.util.Objects;

/**
 * A state change of an alert, in Alertmanager's terms.
 *
 * @param v wire version
 * @param fingerprint stable across restarts: a hash of the sorted labels
 * @param state firing or resolved
 * @param labels identify the alert ({@code alertname}, {@code severity}, {@code host}, ...)
 * @param annotations explain it ({@code summary}, {@code description}, {@code next_steps})
 * @param startsAt when it started firing
 * @param endsAt when it resolved; for a firing alert, null (until resolved) or when it expires by
 *     itself, as in Alertmanager (an alert about one incident is news for a while, not forever)
 */
public record Alert(
    int v,
    String fingerprint,
    State state,
    Map<String, String> labels,
    Map<String, String> annotations,
    Instant startsAt,
    Instant endsAt) {

  /** Alertmanager's two states. */
  public enum State {
    FIRING,
    RESOLVED
  }

  public Alert {
    Objects.requireNonNull(fingerprint, "fingerprint");
    Objects.requireNonNull(state, "state");
    Objects.requireNonNull(startsAt, "starts_at");
    labels = labels == null ? Map.of() : Map.copyOf(labels);
    annotations = annotations == null ? Map.of() : Map.copyOf(annotations);
    if (!labels.containsKey("alertname")) {
      throw new IllegalArgumentException("an alert needs the label alertname");
    }
  }

  /** A fingerprint from labels alone, so the same alert keeps it across restarts. */
  public static String fingerprintOf(Map<String, String> labels) {
    var sorted = new java.util.TreeMap<>(labels);
    long h = 0xcbf29ce484222325L; // FNV-1a 64
    for (var e : sorted.entrySet()) {
      for (String s : new String[] {e.getKey(), "\u00ff", e.getValue(), "\u00fe"}) {
        for (int i = 0; i < s.length(); i++) {
          h ^= s.charAt(i);
          h *= 0x100000001b3L;
        }
      }
    }
    return String.format("%016x", h);
  }

  public String alertName() {
    return labels.get("alertname");
  }

  /** Firing at {@code now}: not resolved, and not past its own end. */
  public boolean activeAt(Instant now) {
    return state == State.FIRING && (endsAt == null || endsAt.isAfter(now));
  }

  /** The same alert, resolved at its end (an expired firing alert). */
  public Alert expired() {
    return new Alert(v, fingerprint, State.RESOLVED, labels, annotations, startsAt, endsAt);
  }
}
