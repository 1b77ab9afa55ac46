package dev.cudawatch.diagnosis.engine;

import java.time.Instant;
import java.util.Map;

/**
 * What is known of one line besides its text.
 *
 * @param recordId stable id of the line's record
 * @param eventTime when it was written
 * @param rank rank from the agent's metadata, or null
 * @param localRank local rank from the agent's metadata, or null
 * @param gpu the GPU the agent knows the line's process uses (CUDA_VISIBLE_DEVICES, PCI address),
 *     or null; used when the text does not name one
 * @param gpuUuid the physical GPU's UUID from the agent, or null
 * @param attribution where the agent's job, rank and GPU came from, with {@code tried} and {@code
 *     visible_gpus} (see the wire record); null when the agent knows nothing
 * @param fromKernel the line came from a kernel source (kmsg, kern.log, the journal's kernel
 *     transport): only such lines make kernel-log incidents; a job's output that quotes one makes
 *     the taxonomy's quoted-kernel-line class instead
 */
public record LineMeta(
    String recordId,
    Instant eventTime,
    Integer rank,
    Integer localRank,
    Integer gpu,
    String gpuUuid,
    Map<String, String> attribution,
    boolean fromKernel) {
  /** A line of a job's output (not from the kernel). */
  public LineMeta(String recordId, Instant eventTime, Integer rank, Integer localRank) {
    this(recordId, eventTime, rank, localRank, null, null, null, false);
  }

  /** A line of a job's output (not from the kernel). */
  public LineMeta(
      String recordId, Instant eventTime, Integer rank, Integer localRank, Integer gpu) {
    this(recordId, eventTime, rank, localRank, gpu, null, null, false);
  }

  /** A line of a job's output (not from the kernel). */
  public LineMeta(
      String recordId,
      Instant eventTime,
      Integer rank,
      Integer localRank,
      Integer gpu,
      String gpuUuid,
      Map<String, String> attribution) {
    this(recordId, eventTime, rank, localRank, gpu, gpuUuid, attribution, false);
  }
}
