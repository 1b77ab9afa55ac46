package dev.cudawatch.diagnosis.engine;

import java.time.Instant;

/**
 * What is known of one line besides its text.
 *
 * @param recordId stable id of the line's record
 * @param eventTime when it was written
 * @param rank rank from the agent's metadata, or null
 * @param localRank local rank from the agent's metadata, or null
 * @param gpu the GPU the agent knows the line's process uses (CUDA_VISIBLE_DEVICES, PCI address),
 *     or null; used when the text does not name one
 */
public record LineMeta(
    String recordId, Instant eventTime, Integer rank, Integer localRank, Integer gpu) {
  public LineMeta(String recordId, Instant eventTime, Integer rank, Integer localRank) {
    this(recordId, eventTime, rank, localRank, null);
  }
}
