package dev.cudawatch.diagnosis.cli;

import dev.cudawatch.common.wire.Incident;
import java.util.List;

/** How classify prints what it found. */
interface Report {
  void file(String file, List<Incident> incidents);

  /** Some of a file's incidents, before {@link #file} gives them all: output may be prepared. */
  default void settled(String file, List<Incident> incidents) {}

  default void end() {}
}
