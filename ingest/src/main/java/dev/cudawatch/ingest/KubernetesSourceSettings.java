package dev.cudawatch.ingest;

import dev.cudawatch.common.config.Validated;
import dev.cudawatch.ingest.attribution.PodResourcesClient;

/**
 * The agent's Kubernetes attribution source ({@code kubernetes:} in agent.yaml): the kubelet's
 * PodResources API, matched to container log paths.
 *
 * @param enabled ask the kubelet (default true; used only when the socket exists)
 * @param podResourcesSocket the kubelet's PodResources socket (mount {@code
 *     /var/lib/kubelet/pod-resources} read-only into the agent's pod)
 * @param timeoutMs deadline of one {@code List} call
 * @param cacheTtlMs how long one answer serves every file
 * @param maxContainers containers with GPUs kept from one answer
 */
public record KubernetesSourceSettings(
    Boolean enabled,
    String podResourcesSocket,
    Long timeoutMs,
    Long cacheTtlMs,
    Integer maxContainers)
    implements Validated {
  public KubernetesSourceSettings {
    enabled = enabled == null ? Boolean.TRUE : enabled;
    podResourcesSocket =
        podResourcesSocket == null ? PodResourcesClient.DEFAULT_SOCKET : podResourcesSocket;
    timeoutMs = timeoutMs == null ? 2_000L : timeoutMs;
    cacheTtlMs = cacheTtlMs == null ? 10_000L : cacheTtlMs;
    maxContainers = maxContainers == null ? 10_000 : maxContainers;
  }

  public static KubernetesSourceSettings defaults() {
    return new KubernetesSourceSettings(null, null, null, null, null);
  }

  @Override
  public void validate(String path) {
    Validated.require(
        timeoutMs >= 100 && timeoutMs <= 60_000, path + "timeout_ms", "must be 100..60000");
    Validated.require(cacheTtlMs >= 1000, path + "cache_ttl_ms", "must be at least 1000");
    Validated.require(
        maxContainers >= 1 && maxContainers <= 1_000_000,
        path + "max_containers",
        "must be 1..1000000");
  }
}
