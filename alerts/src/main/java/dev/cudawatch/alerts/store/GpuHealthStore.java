package dev.cudawatch.alerts.store;

import dev.cudawatch.common.wire.Action;
import dev.cudawatch.common.wire.Incident;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The latest health of each GPU as the processor's ledger reported it on {@code cudawatch.actions}
 * (its recommendations; shadow alerts are not about a GPU). Bounded to {@code capacity} GPUs: the
 * one updated longest ago leaves first, and is counted. A GPU is keyed by its UUID when known, else
 * by host and index, as the ledger keys it; an incident naming only the index still finds a GPU
 * that the ledger knew by UUID (through its host and index).
 */
public final class GpuHealthStore {
  /** Recommendations kept per GPU, newest first. */
  public static final int HISTORY = 10;

  private final int capacity;
  private final LinkedHashMap<String, Entry> byKey = new LinkedHashMap<>();
  private final Map<String, String> byHostGpu = new HashMap<>();
  private long evicted;
  private long duplicates;

  public GpuHealthStore(int capacity) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be at least 1");
    }
    this.capacity = capacity;
  }

  /** One GPU's state: the ledger's counts from its latest recommendation, and what was seen. */
  public record GpuState(
      String key,
      String host,
      String gpu,
      String gpuUuid,
      int ladderLevel,
      String recommendation,
      String reason,
      int recoveries,
      int incidents,
      Double mtbiSeconds,
      int resetsSeen,
      int rebootsSeen,
      Instant updated,
      List<Action> recent) {}

  private static final class Entry {
    String host;
    String gpu;
    String gpuUuid;
    Action latest;
    int resets;
    int reboots;
    final ArrayDeque<Action> recent = new ArrayDeque<>();

    GpuState view(String key) {
      return new GpuState(
          key,
          host,
          gpu,
          gpuUuid,
          latest.ladderLevel(),
          latest.action(),
          latest.reason(),
          latest.recoveries(),
          latest.incidents(),
          latest.mtbiSeconds(),
          resets,
          reboots,
          latest.at(),
          List.copyOf(recent));
    }
  }

  /** The key of the GPU a recommendation is about, or null when it names none. */
  public static String keyOf(String host, String gpu, String gpuUuid) {
    if (gpuUuid != null && !gpuUuid.isBlank()) {
      return gpuUuid;
    }
    return host == null || gpu == null ? null : host + "/" + gpu;
  }

  /**
   * Records a recommendation; false when it is not one, names no GPU, or was already recorded (a
   * record read again after a restart).
   */
  public synchronized boolean add(Action a) {
    if (!Action.RECOMMENDATION.equals(a.kind())) {
      return false;
    }
    String key = keyOf(a.host(), a.gpu(), a.gpuUuid());
    if (key == null) {
      return false;
    }
    Entry e = byKey.remove(key); // re-inserted: the order is by last update
    if (e == null) {
      e = new Entry();
    } else if (e.recent.stream().anyMatch(r -> r.id().equals(a.id()))) {
      byKey.put(key, e);
      duplicates++;
      return false;
    }
    e.host = a.host() != null ? a.host() : e.host;
    e.gpu = a.gpu() != null ? a.gpu() : e.gpu;
    e.gpuUuid = a.gpuUuid() != null ? a.gpuUuid() : e.gpuUuid;
    switch (a.action()) {
      case "reset_gpu", "drain_and_reset" -> e.resets++;
      case "reboot_node" -> e.reboots++;
      default -> {}
    }
    // the newest by event time is the state (records of one GPU may arrive out of order)
    if (e.latest == null || !before(a.at(), e.latest.at())) {
      e.latest = a;
    }
    e.recent.addFirst(a);
    if (e.recent.size() > HISTORY) {
      e.recent.removeLast();
    }
    byKey.put(key, e);
    if (e.host != null && e.gpu != null) {
      byHostGpu.put(e.host + "/" + e.gpu, key);
    }
    while (byKey.size() > capacity) {
      var eldest = byKey.entrySet().iterator().next();
      byKey.remove(eldest.getKey());
      Entry gone = eldest.getValue();
      if (gone.host != null && gone.gpu != null) {
        byHostGpu.remove(gone.host + "/" + gone.gpu, eldest.getKey());
      }
      evicted++;
    }
    return true;
  }

  private static boolean before(Instant a, Instant b) {
    return a != null && b != null && a.isBefore(b);
  }

  /** A GPU by its key (its UUID, or host/index). */
  public synchronized Optional<GpuState> get(String key) {
    Entry e = byKey.get(key);
    return e == null ? Optional.empty() : Optional.of(e.view(key));
  }

  /** The GPU an incident is about: by its UUID, else by its host and index. */
  public synchronized Optional<GpuState> forIncident(Incident i) {
    Object uuid = i.fields().get("gpu_uuid");
    if (uuid != null && byKey.containsKey(uuid.toString())) {
      return get(uuid.toString());
    }
    Object gpu = i.fields().get("gpu");
    if (i.host() == null || gpu == null) {
      return Optional.empty();
    }
    String hg = i.host() + "/" + gpu;
    String key = byHostGpu.getOrDefault(hg, hg);
    return get(key);
  }

  /** Every GPU held, the highest rung first, then the most recently updated. */
  public synchronized List<GpuState> all() {
    List<GpuState> out = new ArrayList<>(byKey.size());
    byKey.forEach((k, e) -> out.add(e.view(k)));
    out.sort(
        Comparator.comparingInt(GpuState::ladderLevel)
            .reversed()
            .thenComparing(
                GpuState::updated, Comparator.nullsLast(Comparator.<Instant>reverseOrder())));
    return out;
  }

  /** The GPUs of one host. */
  public synchronized List<GpuState> onHost(String host) {
    return all().stream().filter(g -> host.equals(g.host())).toList();
  }

  public synchronized int size() {
    return byKey.size();
  }

  /** GPUs forgotten to stay within the capacity. */
  public synchronized long evicted() {
    return evicted;
  }

  /** Recommendations read again and ignored. */
  public synchronized long duplicates() {
    return duplicates;
  }
}
