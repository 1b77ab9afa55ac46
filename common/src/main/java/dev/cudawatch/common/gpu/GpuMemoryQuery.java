package dev.cudawatch.common.gpu;

/**
 * The nvidia-smi query the agent samples GPU memory with; the processor parses rows in this order.
 * The agent runs {@code nvidia-smi --query-gpu=QUERY --format=csv,noheader,nounits -lms N}.
 */
public final class GpuMemoryQuery {
  public static final String QUERY = "timestamp,index,pci.bus_id,memory.used,memory.total";

  private GpuMemoryQuery() {}
}
