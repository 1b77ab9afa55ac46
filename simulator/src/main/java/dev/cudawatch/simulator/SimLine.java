package dev.cudawatch.simulator;

import dev.cudawatch.common.wire.RecordKind;

/**
 * One line the simulated fleet writes.
 *
 * @param timeMillis when it is written (simulated time, epoch milliseconds)
 * @param host node
 * @param job job id, or null for the node's own logs
 * @param rank global rank, or null
 * @param gpu GPU index, or null
 * @param kind a rank's log line, a kernel line, a GPU memory sample, or a job's exit
 * @param file where it is written, relative to the output directory (one stream per file)
 * @param text the line; a progress bar's updates are separated by carriage returns
 * @param who what {@code cudawatch run} knows of the rank that wrote it, or null (node logs)
 */
public record SimLine(
    long timeMillis,
    String host,
    String job,
    Integer rank,
    Integer gpu,
    RecordKind kind,
    String file,
    String text,
    RunIdentity who) {

  /** A line no wrapped rank wrote: the node's own logs, samples and exits. */
  public SimLine(
      long timeMillis,
      String host,
      String job,
      Integer rank,
      Integer gpu,
      RecordKind kind,
      String file,
      String text) {
    this(timeMillis, host, job, rank, gpu, kind, file, text, null);
  }
}
