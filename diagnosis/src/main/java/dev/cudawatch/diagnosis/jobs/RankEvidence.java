package dev.cudawatch.diagnosis.jobs;

import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.diagnosis.taxonomy.Taxonomy;
import dev.cudawatch.diagnosis.taxonomy.XidRole;
import dev.cudawatch.diagnosis.taxonomy.XidVerdict;
import java.util.Map;
import java.util.Set;

/**
 * What the culprit analysis reads of one incident of a job: who (rank, host, pid, GPU), when, and
 * the collective progress and exit facts the classifier extracted.
 *
 * @param rootClass whether the incident may be what made the job fail (not a consequence class)
 * @param seqNum the collective sequence number that timed out, when this is a timeout
 * @param lastEnqueued the rank's last enqueued collective when its watchdog fired or dumped
 * @param exitCode a worker's exit code from the launcher's summary (negative: the signal)
 * @param peer the remote end NCCL names in a failed connection ({@code host} or address)
 * @param kernelEcho the kernel reporting what a process did (an Xid whose verdict is the
 *     application's: 13, 31, 43...), not a failure of its own
 */
public record RankEvidence(
    String id,
    String incidentClass,
    String host,
    Long rank,
    Long localRank,
    String gpu,
    String pci,
    long eventTime,
    boolean rootClass,
    Long seqNum,
    String opType,
    Long lastEnqueued,
    Long lastCompleted,
    Long pid,
    Long exitCode,
    String peer,
    boolean kernelEcho,
    String summary) {

  public static final String TIMEOUT = "nccl_timeout";
  public static final String WORKER_EXIT = "worker_exit";
  private static final Taxonomy TAXONOMY = Taxonomy.builtIn();
  private static final Set<String> CONSEQUENCES = TAXONOMY.consequenceClasses();

  /** The evidence of an incident; {@code root} as the stream decided it. */
  public static RankEvidence of(Incident i) {
    Map<String, Object> f = i.fields();
    boolean timeoutLine = TIMEOUT.equals(i.incidentClass()) && f.get("ran_for_ms") != null;
    return new RankEvidence(
        i.id(),
        i.incidentClass(),
        i.host(),
        number(f.get("rank")),
        number(f.get("local_rank")),
        f.get("gpu") == null ? null : String.valueOf(f.get("gpu")),
        f.get("pci") == null ? null : String.valueOf(f.get("pci")),
        (i.eventTime() != null ? i.eventTime() : i.detectedTime()).toEpochMilli(),
        i.root() && !CONSEQUENCES.contains(i.incidentClass()),
        timeoutLine ? number(f.get("seq_num")) : null,
        f.get("op_type") == null ? null : String.valueOf(f.get("op_type")),
        number(f.get("last_enqueued")),
        number(f.get("last_completed")),
        number(f.get("pid")),
        WORKER_EXIT.equals(i.incidentClass()) ? number(f.get("exit_code")) : null,
        f.get("peer") == null ? null : String.valueOf(f.get("peer")),
        kernelEcho(i),
        i.summary());
  }

  /** The same evidence with the rank another source gives (a pid join, a per-rank file). */
  public RankEvidence withRank(Long r) {
    return new RankEvidence(
        id,
        incidentClass,
        host,
        r,
        localRank,
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

  private static boolean kernelEcho(Incident i) {
    return TAXONOMY.classesWith(XidRole.XID).contains(i.incidentClass())
        && i.fields().get("xid") instanceof Number x
        && TAXONOMY
            .xid(x.intValue())
            .map(info -> info.verdict() == XidVerdict.APPLICATION)
            .orElse(false);
  }

  private static Long number(Object o) {
    return o instanceof Number n ? n.longValue() : null;
  }

  /** Earlier first; at the same time the lower rank, then the id, so the choice is stable. */
  public boolean before(RankEvidence o) {
    if (eventTime != o.eventTime) {
      return eventTime < o.eventTime;
    }
    int r =
        Long.compare(
            rank == null ? Long.MAX_VALUE : rank, o.rank == null ? Long.MAX_VALUE : o.rank);
    return r != 0 ? r < 0 : id.compareTo(o.id) < 0;
  }
}
