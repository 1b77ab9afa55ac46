package dev.cudawatch.common.wire;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * One line (or a small group of lines) shipped by the agent.
 *
 * @param v wire version, {@link WireJson#VERSION}
 * @param id stable record id: {@code source@offset}; a crash may resend a record, never change its
 *     id, so consumers drop duplicates by it
 * @param host node the line came from
 * @param job job id (Slurm, torchelastic, Kubernetes pod) or null
 * @param rank global rank, or null when unknown
 * @param localRank local rank, or null when unknown
 * @param gpu device index as the job sees it, or null
 * @param kind what the record carries
 * @param stream stdout, stderr, file, kmsg, nvidia-smi
 * @param source the stream's source: a path, or a name such as {@code run:<job>}
 * @param sourceId identity of this instance of the source (a file's device and inode, a wrapped
 *     run's id), so a rotated file that reuses the path is a new stream with offsets from 0
 * @param offset byte offset of the first line in the source
 * @param eventTime when the line was written (file modification or read time)
 * @param ingestTime when the agent read it
 * @param text the line, without its trailing newline
 * @param lineCount lines in {@code text} (1 unless the agent grouped lines)
 * @param raw the line before terminal escapes were removed, when the agent is asked to keep it and
 *     it differed; otherwise null
 * @param gpuUuid the physical GPU's UUID when the agent knows it ({@code GPU-...}, or a MIG
 *     instance's {@code MIG-...}), or null
 * @param attribution where job, rank, local_rank, gpu and gpu_uuid came from (field name to source,
 *     e.g. {@code gpu: CUDA_VISIBLE_DEVICES}), plus {@code tried}: the sources the agent consulted,
 *     and {@code visible_gpus}: the physical indexes of the job's devices in its own order, to map
 *     a device ordinal printed by the job, and {@code pid}: the wrapped process's id, which kernel
 *     Xid lines name; null when the agent knows nothing
 */
public record LogRecord(
    int v,
    String id,
    String host,
    String job,
    Integer rank,
    Integer localRank,
    Integer gpu,
    RecordKind kind,
    String stream,
    String source,
    String sourceId,
    long offset,
    Instant eventTime,
    Instant ingestTime,
    String text,
    int lineCount,
    String raw,
    String gpuUuid,
    Map<String, String> attribution) {

  public LogRecord {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(host, "host");
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(source, "source");
    Objects.requireNonNull(text, "text");
    Objects.requireNonNull(eventTime, "event_time");
    if (ingestTime == null) {
      ingestTime = eventTime;
    }
    if (stream == null) {
      stream = "file";
    }
    if (lineCount <= 0) {
      lineCount = 1;
    }
    attribution = attribution == null || attribution.isEmpty() ? null : Map.copyOf(attribution);
  }

  /** The same record with the GPU learnt from {@code how} (e.g. a kernel line's PCI address). */
  public LogRecord withGpu(Integer newGpu, String newUuid, String how) {
    Map<String, String> a =
        attribution == null ? new LinkedHashMap<>() : new LinkedHashMap<>(attribution);
    a.put("gpu", how);
    if (newUuid != null) {
      a.put("gpu_uuid", how);
    }
    return new LogRecord(
        v,
        id,
        host,
        job,
        rank,
        localRank,
        newGpu,
        kind,
        stream,
        source,
        sourceId,
        offset,
        eventTime,
        ingestTime,
        text,
        lineCount,
        raw,
        newUuid != null ? newUuid : gpuUuid,
        a);
  }

  /** The same record at another event time (the job bounds a clock it cannot trust). */
  public LogRecord withEventTime(Instant t) {
    return new LogRecord(
        v,
        id,
        host,
        job,
        rank,
        localRank,
        gpu,
        kind,
        stream,
        source,
        sourceId,
        offset,
        t,
        ingestTime,
        text,
        lineCount,
        raw,
        gpuUuid,
        attribution);
  }

  /** The same record attributed to {@code newJob} (e.g. the job that owned a kernel line's pid). */
  public LogRecord withJob(String newJob, String how) {
    Map<String, String> a =
        attribution == null ? new LinkedHashMap<>() : new LinkedHashMap<>(attribution);
    a.put("job", how);
    return new LogRecord(
        v,
        id,
        host,
        newJob,
        rank,
        localRank,
        gpu,
        kind,
        stream,
        source,
        sourceId,
        offset,
        eventTime,
        ingestTime,
        text,
        lineCount,
        raw,
        gpuUuid,
        a);
  }

  /**
   * The {@link RecordKind#QUIET} marker that this record's stream wrote nothing after {@code end},
   * the end of its last line: the same host, source, source id and stream (so the same key and
   * partition as its lines) and the same job, rank and GPU, no text. Its id differs from that of a
   * line starting at {@code end}.
   */
  public LogRecord quietAt(long end, Instant at) {
    return new LogRecord(
        v,
        idOf(host, source, sourceId, end) + "/quiet",
        host,
        job,
        rank,
        localRank,
        gpu,
        RecordKind.QUIET,
        stream,
        source,
        sourceId,
        end,
        at,
        at,
        "",
        1,
        null,
        gpuUuid,
        attribution);
  }

  /** The stable id of the line at {@code offset} of one instance of {@code source}. */
  public static String idOf(String host, String source, String sourceId, long offset) {
    return host + ":" + source + (sourceId == null ? "" : "#" + sourceId) + "@" + offset;
  }

  /** The key that groups the lines of one stream: lines of a stream are classified in order. */
  public String streamKey() {
    return host + "|" + source + "|" + (sourceId == null ? "" : sourceId) + "|" + stream;
  }

  /** A fresh LOG record; the agent fills the rest through {@link Builder}. */
  public static Builder builder() {
    return new Builder();
  }

  /** Builds records field by field; unset fields take the defaults of the canonical constructor. */
  public static final class Builder {
    private String host = "localhost";
    private String job;
    private Integer rank;
    private Integer localRank;
    private Integer gpu;
    private RecordKind kind = RecordKind.LOG;
    private String stream = "file";
    private String source;
    private String sourceId;
    private long offset;
    private Instant eventTime;
    private Instant ingestTime;
    private String text;
    private int lineCount = 1;
    private String raw;
    private String gpuUuid;
    private Map<String, String> attribution;

    public Builder host(String v) {
      host = v;
      return this;
    }

    public Builder job(String v) {
      job = v;
      return this;
    }

    public Builder rank(Integer v) {
      rank = v;
      return this;
    }

    public Builder localRank(Integer v) {
      localRank = v;
      return this;
    }

    public Builder gpu(Integer v) {
      gpu = v;
      return this;
    }

    public Builder kind(RecordKind v) {
      kind = v;
      return this;
    }

    public Builder stream(String v) {
      stream = v;
      return this;
    }

    public Builder source(String v) {
      source = v;
      return this;
    }

    public Builder sourceId(String v) {
      sourceId = v;
      return this;
    }

    public Builder offset(long v) {
      offset = v;
      return this;
    }

    public Builder eventTime(Instant v) {
      eventTime = v;
      return this;
    }

    public Builder ingestTime(Instant v) {
      ingestTime = v;
      return this;
    }

    public Builder text(String v) {
      text = v;
      return this;
    }

    public Builder lineCount(int v) {
      lineCount = v;
      return this;
    }

    public Builder raw(String v) {
      raw = v;
      return this;
    }

    public Builder gpuUuid(String v) {
      gpuUuid = v;
      return this;
    }

    public Builder attribution(Map<String, String> v) {
      attribution = v;
      return this;
    }

    public LogRecord build() {
      return new LogRecord(
          WireJson.VERSION,
          idOf(host, source, sourceId, offset),
          host,
          job,
          rank,
          localRank,
          gpu,
          kind,
          stream,
          source,
          sourceId,
          offset,
          eventTime,
          ingestTime,
          text,
          lineCount,
          raw,
          gpuUuid,
          attribution);
    }
  }
}
