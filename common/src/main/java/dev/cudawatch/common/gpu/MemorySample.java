package dev.cudawatch.common.gpu;

/**
 * One GPU memory reading.
 *
 * @param epochMillis when it was taken
 * @param gpu device index
 * @param pci PCI address in the kernel log's form ({@code 0000:00:06}), or null
 * @param usedBytes memory in use
 * @param totalBytes the card's memory
 */
public record MemorySample(long epochMillis, int gpu, String pci, long usedBytes, long totalBytes)
    implements java.io.Serializable {}
