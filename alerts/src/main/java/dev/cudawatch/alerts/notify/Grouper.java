package dev.cudawatch.alerts.notify;

import dev.cudawatch.common.wire.Alert;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Decides what one receiver is sent and when, as an Alertmanager route does: alerts are grouped by
 * labels; a new group waits {@code groupWait} for company, later changes wait {@code
 * groupInterval}, and a group still firing is sent again after {@code repeatInterval}. Only state
 * changes count as changes (dedup by fingerprint); a resolved alert is sent once, then forgotten.
 * Pure and driven by the caller's clock, so it is tested without waiting.
 */
final class Grouper {
  static final String OVERFLOW = "{overflow}";

  private final List<String> groupBy;
  private final long waitMs;
  private final long intervalMs;
  private final long repeatMs;
  private final int maxGroups;
  private final boolean changesOnly;
  private final Map<String, Group> groups;

  /** One group's members and what was last sent about each (its JSON is the persisted state). */
  public static final class Group {
    public Map<String, String> labels = new TreeMap<>();
    public Map<String, Alert> members = new LinkedHashMap<>();
    public Map<String, Alert.State> sent = new LinkedHashMap<>();
    public Long changedSince;
    public Long lastSent;

    /** When every member was last sent (Alertmanager's resend; the others send all each time). */
    public Long lastResent;
  }

  /** What to send for one group now; {@code full} when it holds every member, not only changes. */
  record Batch(Map<String, String> groupLabels, String groupKey, List<Alert> alerts, boolean full) {
    Batch(Map<String, String> groupLabels, String groupKey, List<Alert> alerts) {
      this(groupLabels, groupKey, alerts, true);
    }
  }

  Grouper(
      List<String> groupBy,
      long waitMs,
      long intervalMs,
      long repeatMs,
      int maxGroups,
      Map<String, Group> restored) {
    this(groupBy, waitMs, intervalMs, repeatMs, maxGroups, restored, false);
  }

  /**
   * With {@code changesOnly} (Alertmanager's way), a change sends only the alerts that changed and
   * {@code repeatMs} is the resend interval of every firing alert; otherwise (an Alertmanager
   * route) each message holds the whole group.
   */
  Grouper(
      List<String> groupBy,
      long waitMs,
      long intervalMs,
      long repeatMs,
      int maxGroups,
      Map<String, Group> restored,
      boolean changesOnly) {
    this.changesOnly = changesOnly;
    this.groupBy = groupBy;
    this.waitMs = waitMs;
    this.intervalMs = intervalMs;
    this.repeatMs = repeatMs;
    this.maxGroups = maxGroups;
    this.groups = new LinkedHashMap<>(restored);
  }

  /** Notes an alert's latest state; returns false when it changes nothing (a duplicate). */
  boolean offer(Alert a, long now) {
    Map<String, String> labels = new TreeMap<>();
    for (String l : groupBy) {
      labels.put(l, a.labels().getOrDefault(l, ""));
    }
    String key = labels.toString();
    Group g = groups.get(key);
    if (g == null) {
      if (a.state() == Alert.State.RESOLVED) {
        return false; // nothing was said about it here: nothing to resolve
      }
      if (groups.size() >= maxGroups) {
        key = OVERFLOW;
        labels = new TreeMap<>();
        g = groups.get(key);
      }
      if (g == null) {
        g = new Group();
        g.labels = labels;
        groups.put(key, g);
      }
    }
    Alert.State sent = g.sent.get(a.fingerprint());
    Alert member = g.members.get(a.fingerprint());
    if (a.state() == Alert.State.RESOLVED && sent == null) {
      // resolved before anyone heard it fired: say nothing
      if (member != null) {
        g.members.remove(a.fingerprint());
        dropIfEmpty(key, g);
      }
      return false;
    }
    g.members.put(a.fingerprint(), a);
    if (sent == a.state() && member != null && member.state() == a.state()) {
      return false; // the same state again: annotations may be newer, no message for it
    }
    if (sent != a.state() && g.changedSince == null) {
      g.changedSince = now;
    }
    return true;
  }

  /** The groups due at {@code now}, each marked sent at once (for callers that cannot fail). */
  List<Batch> due(long now) {
    List<Batch> out = pending(now);
    for (Batch b : out) {
      sent(b, now);
    }
    return out;
  }

  /**
   * The groups due at {@code now}, not yet marked sent: the caller marks each with {@link #sent}
   * once its message is durably queued, so a failure to queue leaves it due at the next tick.
   */
  List<Batch> pending(long now) {
    expire(now);
    List<Batch> out = new ArrayList<>();
    for (var e : groups.entrySet()) {
      Group g = e.getValue();
      boolean firing = g.members.values().stream().anyMatch(a -> a.state() == Alert.State.FIRING);
      if (changesOnly) {
        // Alertmanager: changes at once and only them; every firing alert again each resend
        Long resent = g.lastResent != null ? g.lastResent : g.lastSent; // state of older versions
        if (resent != null && now >= resent + repeatMs && firing) {
          out.add(batch(e.getKey(), g, new ArrayList<>(g.members.values()), true));
        } else if (g.changedSince != null && now >= g.changedSince + waitMs) {
          List<Alert> changed = new ArrayList<>();
          for (Alert a : g.members.values()) {
            if (g.sent.get(a.fingerprint()) != a.state()) {
              changed.add(a);
            }
          }
          if (changed.isEmpty()) {
            g.changedSince = null; // changed back before it was sent
          } else {
            out.add(batch(e.getKey(), g, changed, resent == null)); // the first starts the clock
          }
        }
        continue;
      }
      boolean send;
      if (g.changedSince != null) {
        long at =
            g.lastSent == null
                ? g.changedSince + waitMs
                : Math.max(g.changedSince, g.lastSent + intervalMs);
        send = now >= at;
      } else {
        send = g.lastSent != null && now >= g.lastSent + repeatMs && firing;
      }
      if (send) {
        out.add(batch(e.getKey(), g, new ArrayList<>(g.members.values()), true));
      }
    }
    return out;
  }

  private static Batch batch(String key, Group g, List<Alert> alerts, boolean full) {
    return new Batch(Map.copyOf(g.labels), key, alerts, full);
  }

  /** Marks a batch from {@link #pending} as sent (durably queued). */
  void sent(Batch b, long now) {
    Group g = groups.get(b.groupKey());
    if (g == null) {
      return;
    }
    for (Alert a : b.alerts()) {
      if (a.state() == Alert.State.RESOLVED) {
        g.members.remove(a.fingerprint());
        g.sent.remove(a.fingerprint());
      } else {
        g.sent.put(a.fingerprint(), a.state());
      }
    }
    g.lastSent = now;
    if (b.full()) {
      g.lastResent = now;
    }
    g.changedSince = null;
    if (g.members.isEmpty()) {
      groups.remove(b.groupKey());
    }
  }

  /**
   * Firing alerts past their own end resolve, as Alertmanager resolves them: announced if they were
   * announced firing, forgotten if never sent.
   */
  private void expire(long now) {
    java.time.Instant at = java.time.Instant.ofEpochMilli(now);
    for (var it = groups.entrySet().iterator(); it.hasNext(); ) {
      Group g = it.next().getValue();
      for (var m = g.members.entrySet().iterator(); m.hasNext(); ) {
        var e = m.next();
        Alert a = e.getValue();
        if (a.state() != Alert.State.FIRING || a.activeAt(at)) {
          continue;
        }
        if (g.sent.get(a.fingerprint()) == null) {
          m.remove();
        } else {
          e.setValue(a.expired());
          if (g.changedSince == null) {
            g.changedSince = now;
          }
        }
      }
      if (g.members.isEmpty() && g.sent.isEmpty()) {
        it.remove();
      }
    }
  }

  Map<String, Group> state() {
    return groups;
  }

  private void dropIfEmpty(String key, Group g) {
    if (g.members.isEmpty() && g.sent.isEmpty()) {
      groups.remove(key);
    }
  }
}
