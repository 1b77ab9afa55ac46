package dev.cudawatch.ingest.attribution;

import dev.cudawatch.common.k8s.PodLogPath;
import java.io.IOException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * GPUs of a followed container log from the kubelet: the pod and container come from the log's path
 * ({@link PodLogPath}), their GPUs from the PodResources API ({@link PodResourcesClient}), mapped
 * to indexes through nvidia-smi's inventory. It names no job: a pod is one rank of a job, and the
 * job's id comes from the process's environment (the /proc source) or the line.
 *
 * <p>The kubelet is asked at most every {@code ttlMs}, or every {@code minRefreshMs} for a
 * container it did not list last time (a pod that just started), on {@link Lookups}' thread, never
 * the reader's; a failed call keeps the last answer and says why in {@code tried}.
 */
public final class KubernetesAttribution implements FileSource {
  /** Asks the kubelet; the client in production. */
  public interface Lister {
    Map<String, List<String>> gpusByContainer() throws IOException;
  }

  static final String TRIED = "kubernetes pod-resources (container log path)";

  private static final String LIST = "kubelet-pod-resources";
  private final Lister lister;
  private final Supplier<GpuInventory> inventory;
  private final Clock clock;
  private final long ttlMs;
  private final long minRefreshMs;
  private final Lookups lookups;
  private final AtomicLong calls = new AtomicLong();
  private final AtomicLong failures = new AtomicLong();

  /** The kubelet's last answer (a failed call keeps the one before), and when it was asked. */
  private record Listed(Map<String, List<String>> gpus, long at, String error) {}

  private volatile Listed last;

  /**
   * @param lookups where the kubelet is asked: never on the caller's thread unless {@link
   *     Lookups#inline}
   */
  public KubernetesAttribution(
      Lister lister,
      Supplier<GpuInventory> inventory,
      Clock clock,
      long ttlMs,
      long minRefreshMs,
      Lookups lookups) {
    this.lister = lister;
    this.inventory = inventory;
    this.clock = clock;
    this.ttlMs = ttlMs;
    this.minRefreshMs = minRefreshMs;
    this.lookups = lookups;
  }

  /** Calls to the kubelet, and those that failed (timed out, refused). */
  public long calls() {
    return calls.get();
  }

  public long failures() {
    return failures.get();
  }

  @Override
  public boolean primed() {
    if (last == null) {
      lookups.submit(LIST, this::list);
    }
    return last != null;
  }

  @Override
  public boolean pending(String file) {
    PodLogPath p = PodLogPath.parse(file);
    Listed l = last;
    return p != null && (l == null || (lookups.pending(LIST) && !l.gpus().containsKey(p.key())));
  }

  @Override
  public FileAttribution.Of of(String file) {
    Map<String, String> a = new LinkedHashMap<>();
    PodLogPath p = PodLogPath.parse(file);
    if (p == null) {
      a.put("tried", TRIED + ": not a pod log path");
      return new FileAttribution.Of(null, null, null, null, null, a);
    }
    Listed l = refresh(p.key());
    a.put("tried", TRIED + (l.error() != null ? ": " + l.error() : ""));
    a.put("k8s_pod", p.namespace() + "/" + p.pod());
    a.put("k8s_container", p.container());
    List<String> ids = l.gpus().get(p.key());
    if (ids == null || ids.isEmpty()) {
      return new FileAttribution.Of(null, null, null, null, null, a);
    }
    a.put("k8s_devices", String.join(",", ids));
    List<Integer> indexes = new ArrayList<>();
    GpuInventory inv = inventory.get();
    for (String id : ids) {
      GpuInventory.Gpu g = inv.byUuid(id);
      if (g != null) {
        indexes.add(g.index());
      }
    }
    String how = "kubernetes pod-resources (" + p.namespace() + "/" + p.pod() + ")";
    Integer gpu = null;
    String uuid = null;
    if (ids.size() == 1) {
      uuid = ids.get(0);
      a.put("gpu_uuid", how);
      if (indexes.size() == 1) {
        gpu = indexes.get(0);
        a.put("gpu", how + " + nvidia-smi");
      }
    }
    if (indexes.size() == ids.size()) {
      a.put("visible_gpus", indexes.stream().map(String::valueOf).collect(Collectors.joining(",")));
    }
    return new FileAttribution.Of(null, null, null, gpu, uuid, a);
  }

  /** The last answer; asks the kubelet again (elsewhere) when it is due. */
  private Listed refresh(String key) {
    Listed l = last;
    long now = clock.millis();
    boolean due =
        l == null
            || now < l.at()
            || now - l.at() >= ttlMs
            || (!l.gpus().containsKey(key) && now - l.at() >= minRefreshMs);
    if (due) {
      lookups.submit(LIST, this::list);
      l = last;
    }
    return l != null ? l : new Listed(Map.of(), now, null);
  }

  private void list() {
    long at = clock.millis();
    Listed before = last;
    calls.incrementAndGet();
    try {
      last = new Listed(Map.copyOf(lister.gpusByContainer()), at, null);
    } catch (IOException | RuntimeException e) {
      failures.incrementAndGet();
      // keep the last answer: a kubelet restart is brief
      last = new Listed(before == null ? Map.of() : before.gpus(), at, e.getMessage());
    }
  }
}
