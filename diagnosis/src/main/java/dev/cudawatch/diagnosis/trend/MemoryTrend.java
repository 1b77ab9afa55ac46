package dev.cudawatch.diagnosis.trend;

import dev.cudawatch.common.gpu.MemorySample;

/**
 * A steady growth of GPU memory heading to full.
 *
 * @param growthBytesPerSecond robust (Theil–Sen) slope over the window
 * @param predictedSecondsToFull at that slope, from the last sample
 * @param at the sample the prediction was made at
 */
public record MemoryTrend(
    double growthBytesPerSecond, double predictedSecondsToFull, MemorySample at) {}
