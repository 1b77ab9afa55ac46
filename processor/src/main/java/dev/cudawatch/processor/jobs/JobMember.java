package dev.cudawatch.processor.jobs;

import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.diagnosis.jobs.RankEvidence;
import dev.cudawatch.diagnosis.taxonomy.Taxonomy;
import dev.cudawatch.processor.functions.XidVerdicts;
import java.util.Set;

/**
 * What a job failure remembers of one incident. A Flink POJO (public fields, no-arg constructor) so
 * its state has an explicit serializer, never Kryo.
 */
public class JobMember {
  /**
   * Classes that are what a rank reports when another rank failed (taxonomy.yaml's {@code job_role:
   * consequence}): the root cause only when nothing else is.
   */
  private static final Set<String> CONSEQUENCE_CLASSES = Taxonomy.builtIn().consequenceClasses();

  public String id;
  public String incidentClass;
  public String host;
  public Integer rank;
  public String gpu;
  public String summary;
  public long eventTime;
  public boolean rootClass;

  /** The facts the culprit analysis reads (version 2 of the state format; null before). */
  public Integer localRank;

  public String pci;
  public Long seqNum;
  public String opType;
  public Long lastEnqueued;
  public Long lastCompleted;
  public Long pid;
  public Long exitCode;
  public String peer;
  public boolean kernelEcho;

  public JobMember() {}

  static JobMember of(Incident i) {
    JobMember m = new JobMember();
    m.id = i.id();
    m.incidentClass = i.incidentClass();
    m.host = i.host();
    m.rank = i.fields().get("rank") instanceof Number n ? n.intValue() : null;
    m.gpu = i.fields().get("gpu") == null ? null : String.valueOf(i.fields().get("gpu"));
    m.summary = i.summary();
    m.eventTime = (i.eventTime() != null ? i.eventTime() : i.detectedTime()).toEpochMilli();
    m.rootClass = i.root() && !CONSEQUENCE_CLASSES.contains(i.incidentClass()) && !derivedXid(i);
    RankEvidence e = RankEvidence.of(i);
    m.localRank = e.localRank() == null ? null : e.localRank().intValue();
    m.pci = e.pci();
    m.seqNum = e.seqNum();
    m.opType = e.opType();
    m.lastEnqueued = e.lastEnqueued();
    m.lastCompleted = e.lastCompleted();
    m.pid = e.pid();
    m.exitCode = e.exitCode();
    m.peer = e.peer();
    m.kernelEcho = e.kernelEcho();
    return m;
  }

  /** A copy naming the culprit's rank and GPU (the analysis may join or infer them). */
  JobMember withCulprit(Integer rank, String gpu) {
    JobMember m = new JobMember();
    m.id = id;
    m.incidentClass = incidentClass;
    m.host = host;
    m.rank = rank;
    m.gpu = gpu;
    m.summary = summary;
    m.eventTime = eventTime;
    m.rootClass = rootClass;
    return m;
  }

  /** What the culprit analysis reads of this member. */
  RankEvidence evidence() {
    return new RankEvidence(
        id,
        incidentClass,
        host,
        rank == null ? null : rank.longValue(),
        localRank == null ? null : localRank.longValue(),
        gpu,
        pci,
        eventTime,
        rootClass,
        seqNum,
        opType,
        lastEnqueued,
        lastCompleted,
        pid,
        exitCode,
        peer,
        kernelEcho,
        summary);
  }

  /** Current drivers mark an Xid that follows from an earlier one: it is a consequence. */
  static boolean derivedXid(Incident i) {
    if (!XidVerdicts.xidClass().equals(i.incidentClass())) {
      return false;
    }
    for (String line : i.excerpt()) {
      if (line.contains("caused by previous Xid")) {
        return true;
      }
    }
    return false;
  }

  /** Earlier first; at the same time the lower rank, then the id, so the choice is stable. */
  boolean before(JobMember o) {
    if (eventTime != o.eventTime) {
      return eventTime < o.eventTime;
    }
    int r =
        Integer.compare(
            rank == null ? Integer.MAX_VALUE : rank, o.rank == null ? Integer.MAX_VALUE : o.rank);
    return r != 0 ? r < 0 : id.compareTo(o.id) < 0;
  }
}
