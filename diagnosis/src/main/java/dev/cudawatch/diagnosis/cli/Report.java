package dev.cudawatch.diagnosis.cli;

import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.diagnosis.jobs.Culprit;
import java.util.List;

/** How classify prints what it found. */
interface Report {
  void file(String file, List<Incident> incidents);

  /** Some of a file's incidents, before {@link #file} gives them all: output may be prepared. */
  default void settled(String file, List<Incident> incidents) {}

  /**
   * The job's one root cause: after its files with {@code --job}, or after a file that holds
   * several ranks' output (a combined torchrun log).
   */
  default void job(String name, Culprit culprit, int incidents) {}

  default void end() {}
}
