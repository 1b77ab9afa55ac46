package dev.cudawatch.ingest.attribution;

import java.util.function.Supplier;

/**
 * The node's GPU inventory for attribution, asked of nvidia-smi on a lookup thread: empty until it
 * answers, so a wedged GPU (nvidia-smi hanging in the kernel) delays only the UUIDs, never a line
 * or the agent's start.
 */
public final class NodeGpus implements Supplier<GpuInventory> {
  private volatile GpuInventory known = GpuInventory.empty();

  private NodeGpus() {}

  /** Asks {@code nvidiaSmi} once, on {@code lookups}. */
  public static NodeGpus query(String nvidiaSmi, Lookups lookups) {
    NodeGpus n = new NodeGpus();
    lookups.submit("gpu-inventory", () -> n.known = GpuInventory.query(nvidiaSmi));
    return n;
  }

  @Override
  public GpuInventory get() {
    return known;
  }
}
