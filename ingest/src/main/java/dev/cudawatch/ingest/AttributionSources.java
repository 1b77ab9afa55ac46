package dev.cudawatch.ingest;

import dev.cudawatch.ingest.attribution.AttributionChain;
import dev.cudawatch.ingest.attribution.Changes;
import dev.cudawatch.ingest.attribution.FileAttribution;
import dev.cudawatch.ingest.attribution.FileSource;
import dev.cudawatch.ingest.attribution.GpuInventory;
import dev.cudawatch.ingest.attribution.KubernetesAttribution;
import dev.cudawatch.ingest.attribution.Lookups;
import dev.cudawatch.ingest.attribution.NodeGpus;
import dev.cudawatch.ingest.attribution.PodResourcesClient;
import dev.cudawatch.ingest.attribution.ProcessScan;
import dev.cudawatch.ingest.attribution.ScontrolCommand;
import dev.cudawatch.ingest.attribution.SlurmAttribution;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds the node's attribution sources for followed files from the agent's settings, in order of
 * trust: Slurm (sidecars, path patterns, scontrol) when {@code slurm.enabled}, Kubernetes (the
 * kubelet's PodResources) when its socket exists, then the process writing the file (/proc). The
 * one place the chain is put together: the agent runtime and {@code cudawatch local} both use it.
 *
 * <p>Every slow lookup runs off the agent's read thread: nvidia-smi's inventory, the kubelet and
 * /proc on one thread, the sidecar directory on its own (a hung nvidia-smi must not hold it),
 * scontrol on two (a slow slurmctld holds only them), each with a queue of 256. The start waits at
 * most {@link #PRIME} for the first answers (the files already there are read with them); a new
 * file's first line waits at most {@link #WAIT_MS} for what it asked. Closing it stops those
 * threads and closes the PodResources connection.
 */
public final class AttributionSources implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(AttributionSources.class);

  /** What a new file's first line may wait for its lookups: enough for a sidecar or /proc pass. */
  static final long WAIT_MS = 30;

  /**
   * How long the agent's start waits for the first sidecar listing, /proc pass and kubelet call.
   */
  static final Duration PRIME = Duration.ofSeconds(1);

  private static final int MAX_FILES = 65_536;
  private static final int QUEUE = 256;

  private final AttributionChain chain;
  private final PodResourcesClient podResources;
  private final List<String> off;
  private final List<Lookups> lookups;
  private final SlurmAttribution slurm;
  private final ScontrolCommand scontrol;
  private final KubernetesAttribution kubernetes;
  private final FileAttribution proc;
  private final boolean followSidecarPaths;
  private final Supplier<GpuInventory> inventory;

  private AttributionSources(
      AttributionChain chain,
      PodResourcesClient podResources,
      List<String> off,
      List<Lookups> lookups,
      SlurmAttribution slurm,
      ScontrolCommand scontrol,
      KubernetesAttribution kubernetes,
      FileAttribution proc,
      boolean followSidecarPaths,
      Supplier<GpuInventory> inventory) {
    this.chain = chain;
    this.podResources = podResources;
    this.off = List.copyOf(off);
    this.lookups = lookups;
    this.slurm = slurm;
    this.scontrol = scontrol;
    this.kubernetes = kubernetes;
    this.proc = proc;
    this.followSidecarPaths = followSidecarPaths;
    this.inventory = inventory;
  }

  /** The sources {@code settings} turn on and this node has; logs which are on and which off. */
  public static AttributionSources open(AgentSettings settings, Clock clock) {
    Changes changes = new Changes();
    Lookups local = Lookups.pool("attribution", 1, QUEUE, changes);
    Lookups sidecars = Lookups.pool("slurm-sidecars", 1, QUEUE, changes);
    Lookups scontrolLookups = Lookups.pool("scontrol", 2, QUEUE, changes);
    Supplier<GpuInventory> inventory = NodeGpus.query(settings.nvidiaSmi(), local);
    List<FileSource> sources = new ArrayList<>();
    List<String> off = new ArrayList<>();
    PodResourcesClient podResources = null;
    SlurmAttribution slurm = null;
    ScontrolCommand scontrol = null;
    KubernetesAttribution kubernetes = null;
    FileAttribution proc = null;
    SlurmSourceSettings ss = settings.slurm();
    if (ss.enabled()) {
      String node = ss.nodeName() != null ? ss.nodeName() : settings.host().split("\\.")[0];
      scontrol =
          ss.scontrol().isBlank()
              ? null
              : new ScontrolCommand(ss.scontrol(), Duration.ofMillis(ss.scontrolTimeoutMs()));
      slurm =
          new SlurmAttribution(
              Path.of(ss.sidecarDir()),
              ss.patterns(),
              scontrol,
              node,
              inventory,
              clock,
              5_000,
              ss.cacheTtlMs(),
              ss.maxJobs(),
              sidecars,
              scontrolLookups);
      sources.add(slurm);
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
            new PodResourcesClient(socket, Duration.ofMillis(k8s.timeoutMs()), k8s.maxContainers());
        kubernetes =
            new KubernetesAttribution(
                podResources, inventory, clock, k8s.cacheTtlMs(), 2_000, local);
        sources.add(kubernetes);
      } catch (java.io.IOException e) {
        off.add("kubernetes (" + e.getMessage() + ")");
      }
    }
    if (Files.isDirectory(Path.of("/proc/self/fd"))) {
      // a followed log's lines take the job, rank and GPU of the process writing it
      proc =
          new FileAttribution(
              ProcessScan.forNode(settings.nvidiaSmi(), inventory), clock, 60_000, local);
      sources.add(proc);
    } else {
      off.add("writing process (no /proc/self/fd)");
    }
    LOG.info(
        "attribution sources: {}{}",
        sources.stream().map(x -> x.getClass().getSimpleName()).toList(),
        off.isEmpty() ? "" : "; off: " + String.join(", ", off));
    AttributionChain chain =
        sources.isEmpty()
            ? null
            : new AttributionChain(sources, changes, System::nanoTime, WAIT_MS, MAX_FILES);
    if (chain != null) {
      chain.prime(PRIME);
    }
    return new AttributionSources(
        chain,
        podResources,
        off,
        List.of(local, sidecars, scontrolLookups),
        slurm,
        scontrol,
        kubernetes,
        proc,
        ss.enabled() && ss.followSidecarPaths(),
        inventory);
  }

  /** The node's GPUs as known now: empty until nvidia-smi answered on a lookup thread. */
  public Supplier<GpuInventory> inventory() {
    return inventory;
  }

  /** The chain, or null when no source is on. */
  public AttributionChain chain() {
    return chain;
  }

  /** The sources left off, each with why. */
  public List<String> off() {
    return off;
  }

  /**
   * The files to follow besides the configured globs: with {@code slurm.follow_sidecar_paths}, the
   * output paths that this node's sidecars name; null when off. Never blocks.
   */
  public Supplier<List<String>> followed() {
    return followSidecarPaths && slurm != null ? slurm::followedPaths : null;
  }

  /**
   * Counters for the agent's metrics, by name: lookups run (by kind), timeouts, lookups refused by
   * a full queue, Slurm sidecars refused for a path their job's user does not own, lines shipped
   * before their attribution was known, and new files that waited.
   */
  public Map<String, LongSupplier> counters() {
    Map<String, LongSupplier> c = new LinkedHashMap<>();
    c.put("lookups_scontrol", () -> slurm == null ? 0 : slurm.scontrolCalls());
    c.put("lookups_sidecar_dir", () -> slurm == null ? 0 : slurm.listings());
    c.put("lookups_kubelet", () -> kubernetes == null ? 0 : kubernetes.calls());
    c.put("lookups_proc", () -> proc == null ? 0 : proc.scans());
    c.put("timeouts_scontrol", () -> scontrol == null ? 0 : scontrol.timeouts());
    c.put("failures_kubelet", () -> kubernetes == null ? 0 : kubernetes.failures());
    c.put("rejected", () -> lookups.stream().mapToLong(Lookups::rejected).sum());
    c.put("sidecars_refused", () -> slurm == null ? 0 : slurm.refusedSidecars());
    c.put("lines_before_known", () -> chain == null ? 0 : chain.linesBeforeKnown());
    c.put("waits", () -> chain == null ? 0 : chain.waits());
    return c;
  }

  @Override
  public void close() {
    lookups.forEach(Lookups::close);
    if (podResources != null) {
      podResources.close();
    }
  }
}
