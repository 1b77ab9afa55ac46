package dev.cudawatch.ingest.archfixture;

import dev.cudawatch.processor.ProcessorJob;

/**
 * A test-only class that poses as the agent's and uses the Flink job, which no class of ingest may
 * do: ArchitectureTest shows its rules catch it.
 */
public final class ReachesIntoTheJob {
  private ReachesIntoTheJob() {}

  static Class<?> job() {
    return ProcessorJob.class;
  }
}
