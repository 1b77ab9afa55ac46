package dev.cudawatch.ingest.attribution;

import java.io.IOException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * GPUs of a followed container log from the kubelet: the pod and container come from the log's path
 * ({@link PodLogPath}), their GPUs from the PodResources API ({@link PodResourcesClient}), mapped
 * to indexes through nvidia-smi's inventory. It names no job: a pod is one rank of a job, and the
 * job's id comes from the process's environment (the /proc source) or the line.
 *
 * <p>The kubelet is asked at most every {@code ttlMs}, or every {@code minRefreshMs} for a
 * container it did not list last time (a pod that just started); a failed call keeps the last
 * answer and says why in {@code tried}.
 */
public final class KubernetesAttribution implements FileSource {
  /** Asks the kubelet; the client in production. */
  public interface Lister {
    Map<String, List<String>> gpusByContainer() throws IOException;
  }

  static final String TRIED = "kubernetes pod-resources (container log path)";

  private final Lister lister;
  private final GpuInventory inventory;
  private final Clock clock;
  private final long ttlMs;
  private final long minRefreshMs;

  private Map<String, List<String>> gpus = Map.of();
  private long askedAt;
  private boolean asked;
  private String lastError;

  public KubernetesAttribution(
      Lister lister, GpuInventory inventory, Clock clock, long ttlMs, long minRefreshMs) {
    this.lister = lister;
    this.inventory = inventory;
    this.clock = clock;
    this.ttlMs = ttlMs;
    this.minRefreshMs = minRefreshMs;
  }

  @Override
  public synchronized FileAttribution.Of of(String file) {
    Map<String, String> a = new LinkedHashMap<>();
    PodLogPath p = PodLogPath.parse(file);
    if (p == null) {
      a.put("tried", TRIED + ": not a pod log path");
      return new FileAttribution.Of(null, null, null, null, null, a);
    }
    refresh(p.key());
    a.put("tried", TRIED + (lastError != null ? ": " + lastError : ""));
    a.put("k8s_pod", p.namespace() + "/" + p.pod());
    a.put("k8s_container", p.container());
    List<String> ids = gpus.get(p.key());
    if (ids == null || ids.isEmpty()) {
      return new FileAttribution.Of(null, null, null, null, null, a);
    }
    a.put("k8s_devices", String.join(",", ids));
    List<Integer> indexes = new ArrayList<>();
    for (String id : ids) {
      GpuInventory.Gpu g = inventory.byUuid(id);
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

  private void refresh(String key) {
    long now = clock.millis();
    long age = now - askedAt;
    boolean due =
        !asked || now < askedAt || age >= ttlMs || (!gpus.containsKey(key) && age >= minRefreshMs);
    if (!due) {
      return;
    }
    asked = true;
    askedAt = now;
    try {
      gpus = lister.gpusByContainer();
      lastError = null;
    } catch (IOException | RuntimeException e) {
      lastError = e.getMessage(); // keep the last answer: a kubelet restart is brief
    }
  }
}
