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
  EXIT
}
