package dev.cudawatch.ingest;

import dev.cudawatch.ingest.attribution.AttributionChain;
import dev.cudawatch.ingest.attribution.FileAttribution;
import dev.cudawatch.ingest.attribution.FileSource;
import dev.cudawatch.ingest.attribution.GpuInventory;
import dev.cudawatch.ingest.attribution.KubernetesAttribution;
import dev.cudawatch.ingest.attribution.PodResourcesClient;
import dev.cudawatch.ingest.attribution.ProcessScan;
import dev.cudawatch.ingest.attribution.SlurmAttribution;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds the node's attribution sources for followed files from the agent's settings, in order of
 * trust: Slurm (sidecars, path patterns, scontrol) when {@code slurm.enabled}, Kubernetes (the
 * kubelet's PodResources) when its socket exists, then the process writing the file (/proc). The
 * one place the chain is put together: the agent runtime and {@code cudawatch local} both use it.
 * Closing it closes the PodResources connection.
 */
public final class AttributionSources implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(AttributionSources.class);

  private final AttributionChain chain;
  private final PodResourcesClient podResources;
  private final List<String> off;

  private AttributionSources(
      AttributionChain chain, PodResourcesClient podResources, List<String> off) {
    this.chain = chain;
    this.podResources = podResources;
    this.off = List.copyOf(off);
  }

  /** The sources {@code settings} turn on and this node has; logs which are on and which off. */
  public static AttributionSources open(AgentSettings settings, Clock clock) {
    GpuInventory inventory = GpuInventory.query(settings.nvidiaSmi());
    List<FileSource> sources = new ArrayList<>();
    List<String> off = new ArrayList<>();
    PodResourcesClient podResources = null;
    SlurmSourceSettings slurm = settings.slurm();
    if (slurm.enabled()) {
      String node = slurm.nodeName() != null ? slurm.nodeName() : settings.host().split("\\.")[0];
      sources.add(
          new SlurmAttribution(
              Path.of(slurm.sidecarDir()),
              slurm.patterns(),
              slurm.scontrol().isBlank() ? null : SlurmAttribution.scontrol(slurm.scontrol()),
              node,
              inventory,
              clock,
              5_000,
              slurm.cacheTtlMs(),
              slurm.maxJobs()));
    } else {
      off.add("slurm (slurm.enabled: false)");
    }
    KubernetesSourceSettings k8s = settings.kubernetes();
    Path socket = Path.of(k8s.podResourcesSocket());
    if (!k8s.enabled()) {
      off.add("kubernetes (kubernetes.enabled: false)");
    } else if (!Files.exists(socket)) {
      off.add("kubernetes (no " + socket + ")");
    } else {
      try {
        podResources =
            new PodResourcesClient(
                socket, java.time.Duration.ofMillis(k8s.timeoutMs()), k8s.maxContainers());
        sources.add(
            new KubernetesAttribution(podResources, inventory, clock, k8s.cacheTtlMs(), 2_000));
      } catch (java.io.IOException e) {
        off.add("kubernetes (" + e.getMessage() + ")");
      }
    }
    if (Files.isDirectory(Path.of("/proc/self/fd"))) {
      // a followed log's lines take the job, rank and GPU of the process writing it
      sources.add(new FileAttribution(ProcessScan.forNode(settings.nvidiaSmi()), clock, 60_000));
    } else {
      off.add("writing process (no /proc/self/fd)");
    }
    LOG.info(
        "attribution sources: {}{}",
        sources.stream().map(x -> x.getClass().getSimpleName()).toList(),
        off.isEmpty() ? "" : "; off: " + String.join(", ", off));
    return new AttributionSources(
        sources.isEmpty() ? null : new AttributionChain(sources), podResources, off);
  }

  /** The chain, or null when no source is on. */
  public AttributionChain chain() {
    return chain;
  }

  /** The sources left off, each with why. */
  public List<String> off() {
    return off;
  }

  @Override
  public void close() {
    if (podResources != null) {
      podResources.close();
    }
  }
}
