package dev.cudawatch.diagnosis.engine;

import java.time.Instant;

/**
 * What is known of one line besides its text.
 *
 * @param recordId stable id of the line's record
 * @param eventTime when it was written
 * @param rank rank from the agent's metadata, or null
 * @param localRank local rank from the agent's metadata, or null
 */
public record LineMeta(String recordId, Instant eventTime, Integer rank, Integer localRank) {}
