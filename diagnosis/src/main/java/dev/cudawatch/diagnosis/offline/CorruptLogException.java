package dev.cudawatch.diagnosis.offline;

import dev.cudawatch.common.wire.Incident;
import java.io.IOException;
import java.util.List;

/**
 * Compressed data went bad part way through: the text before it was classified, and its incidents
 * travel with the error so they are reported, not lost.
 */
public final class CorruptLogException extends IOException {
  private static final long serialVersionUID = 1L;

  private List<Incident> incidents = List.of();

  public CorruptLogException(String message, Throwable cause) {
    super(message, cause);
  }

  CorruptLogException withIncidents(List<Incident> found) {
    this.incidents = List.copyOf(found);
    return this;
  }

  /** The incidents of the text before the corruption. */
  public List<Incident> incidents() {
    return incidents;
  }
}
