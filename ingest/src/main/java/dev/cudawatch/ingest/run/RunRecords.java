package dev.cudawatch.ingest.run;

import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.ingest.attribution.RunAttribution;
import dev.cudawatch.ingest.framing.FramedLine;
import dev.cudawatch.ingest.framing.RankPrefix;
import java.time.Clock;
import java.util.List;

/** The records of one wrapped job: its lines, per stream, and its exit. */
public final class RunRecords {
  private final String host;
  private final String job;
  private final Integer rank;
  private final Integer localRank;
  private final Integer gpu;
  private final String gpuUuid;
  private final java.util.Map<String, String> attribution;
  private final Clock clock;
  private final String runId;
  private final String source;

  public RunRecords(String host, RunAttribution who, String runId, Clock clock) {
    this.host = host;
    this.runId = runId;
    this.job = who.job();
    this.rank = who.rank();
    this.localRank = who.localRank();
    this.gpu = who.gpu();
    this.gpuUuid = who.gpuUuid();
    this.attribution = java.util.Map.copyOf(who.attribution());
    this.clock = clock;
    this.source = "run:" + job + (rank != null ? "/rank" + rank : "");
  }

  /** A line of the job's {@code stream} (stdout or stderr). */
  public LogRecord line(String stream, FramedLine l) {
    return base().rank(rank != null ? rank : rankPrefix(l.text())).stream(stream)
        .source(source + "/" + stream)
        .offset(l.start())
        .text(l.text())
        .build();
  }

  /** The job's {@code stream} closed after the line ending at {@code end}: it is complete. */
  public LogRecord quiet(String stream, long end) {
    return line(stream, new FramedLine(end, end, "", false)).quietAt(end, clock.instant());
  }

  /** How the job ended. */
  public LogRecord exit(List<String> command, ExitStatus status) {
    return base().rank(rank).kind(RecordKind.EXIT).stream("exit")
        .source(source + "/exit")
        .offset(0)
        .text("cudawatch run: " + String.join(" ", command) + " finished with " + status.describe())
        .build();
  }

  private LogRecord.Builder base() {
    return LogRecord.builder()
        .host(host)
        .job(job)
        .localRank(localRank)
        .gpu(gpu)
        .gpuUuid(gpuUuid)
        .attribution(attribution)
        .sourceId(runId)
        .eventTime(clock.instant());
  }

  /** The rank of a torchrun {@code [rankN]:} prefix, or null. */
  static Integer rankPrefix(String text) {
    return RankPrefix.of(text);
  }
}
