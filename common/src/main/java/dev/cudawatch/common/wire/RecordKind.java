package dev.cudawatch.common.wire;

/** What a {@link LogRecord} carries. */
public enum RecordKind {
  /** A line a training job wrote (stdout, stderr or a log file). */
  LOG,
  /** A line of the kernel log (NVRM Xid, OOM killer). */
  KERNEL,
  /** One GPU memory sample, as an nvidia-smi CSV row. */
  GPU_MEMORY,
  /** The exit status of a wrapped job ({@code cudawatch run}). */
  EXIT,
  /**
   * No line: the stream's writer has written nothing since the line ending at this record's offset
   * for the agent's {@code quiet_marker_ms} (or closed the stream), so a block it was writing (a
   * traceback, a burst of errors) is complete. It follows the stream's lines on their key, so it
   * arrives after them; the processor closes the stream's open incidents on it instead of waiting
   * for its own flush timer, whose quiet is measured after Kafka and Flink's buffers.
   */
  QUIET
}
