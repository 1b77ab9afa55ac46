package dev.cudawatch.alerts.store;

import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.WireJson;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The most recent incidents, newest first, bounded in count and in bytes (their JSON size: one
 * incident can carry long log excerpts); duplicates (same id) are kept once.
 */
public final class IncidentStore {
  private final int capacity;
  private final long maxBytes;
  private long bytes;
  private final ArrayDeque<Incident> ring = new ArrayDeque<>();
  private final Set<String> ids = new HashSet<>();
  private long evicted;

  public IncidentStore(int capacity) {
    this(capacity, Long.MAX_VALUE);
  }

  public IncidentStore(int capacity, long maxBytes) {
    this.capacity = capacity;
    this.maxBytes = maxBytes;
  }

  private static long sizeOf(Incident i) {
    return WireJson.toBytes(i).length;
  }

  /**
   * Adds an incident; false when it was already there. A known incident that comes back with a
   * verdict (the processor's Xid correlation) replaces the stored one in place.
   */
  public synchronized boolean add(Incident i) {
    if (!ids.add(i.id())) {
      if (i.verdict() != null) {
        ArrayDeque<Incident> updated = new ArrayDeque<>(ring.size());
        for (Incident old : ring) {
          if (old.id().equals(i.id())) {
            bytes += sizeOf(i) - sizeOf(old);
            updated.addLast(i);
          } else {
            updated.addLast(old);
          }
        }
        ring.clear();
        ring.addAll(updated);
        evict();
      }
      return false;
    }
    ring.addFirst(i);
    bytes += sizeOf(i);
    evict();
    return true;
  }

  private void evict() {
    while (ring.size() > capacity || (bytes > maxBytes && ring.size() > 1)) {
      Incident gone = ring.removeLast();
      ids.remove(gone.id());
      bytes -= sizeOf(gone);
      evicted++;
    }
  }

  /** JSON bytes of the incidents held. */
  public synchronized long bytes() {
    return bytes;
  }

  /** A page of incidents matching the filter, newest first. */
  public synchronized Page query(IncidentQuery q) {
    List<Incident> items = new ArrayList<>();
    int matched = 0;
    for (Iterator<Incident> it = ring.iterator(); it.hasNext(); ) {
      Incident i = it.next();
      if (!q.matches(i)) {
        continue;
      }
      if (matched >= q.offset() && items.size() < q.limit()) {
        items.add(i);
      }
      matched++;
    }
    return new Page(items, matched, q.offset(), q.limit());
  }

  /**
   * A page of the incidents {@code p} accepts, newest first (the incident page's filters, which
   * look inside fields such as the GPU).
   */
  public synchronized Page find(Predicate<Incident> p, int offset, int limit) {
    List<Incident> items = new ArrayList<>();
    int matched = 0;
    for (Incident i : ring) {
      if (p.test(i)) {
        if (matched >= offset && items.size() < limit) {
          items.add(i);
        }
        matched++;
      }
    }
    return new Page(items, matched, offset, limit);
  }

  /** The incident of this id, if still held. */
  public synchronized Optional<Incident> get(String id) {
    if (!ids.contains(id)) {
      return Optional.empty();
    }
    return ring.stream().filter(i -> i.id().equals(id)).findFirst();
  }

  public synchronized int size() {
    return ring.size();
  }

  public synchronized long evicted() {
    return evicted;
  }

  /** One page of a query's result. */
  public record Page(List<Incident> items, int total, int offset, int limit) {}

  /** Filters of GET /api/incidents. */
  public record IncidentQuery(
      String incidentClass, String host, String job, Instant since, int offset, int limit) {
    boolean matches(Incident i) {
      return (incidentClass == null || incidentClass.equals(i.incidentClass()))
          && (host == null || host.equals(i.host()))
          && (job == null || job.equals(i.job()))
          && (since == null || (i.detectedTime() != null && !i.detectedTime().isBefore(since)));
    }
  }
}
