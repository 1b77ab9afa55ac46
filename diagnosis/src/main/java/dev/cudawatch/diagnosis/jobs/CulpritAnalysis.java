package dev.cudawatch.diagnosis.jobs;

import dev.cudawatch.diagnosis.jobs.Culprit.Cause;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Finds the culprit of a failed distributed job from what its ranks printed: the same code for the
 * stream (the processor's job grouping) and offline ({@code classify --job}).
 *
 * <p>A collective timeout is a symptom. The cause, in order: the rank(s) whose last enqueued
 * collective is below the one the others timed out in (it never issued it: hung in host code, data
 * loading, I/O, a deadlock); else the peer NCCL names in a failed connection (the network); else
 * the job's earliest error of its own; else a worker killed by SIGKILL; else a rank of the
 * launcher's summary that never reported the timeout; else the earliest incident. The launcher's
 * own "Root Cause" is only the first process to die, so its summary is read for ranks, pids and
 * exit codes, never for the verdict.
 */
public final class CulpritAnalysis {
  private static final long SIGKILL = -9;

  private CulpritAnalysis() {}

  /** The culprit of the job these incidents belong to, or null when there are none. */
  public static Culprit analyze(List<RankEvidence> members) {
    if (members.isEmpty()) {
      return null;
    }
    Map<Long, Long> rankOfPid = new HashMap<>();
    Map<Long, RankEvidence> exits = new TreeMap<>();
    for (RankEvidence m : members) {
      if (RankEvidence.WORKER_EXIT.equals(m.incidentClass())
          && m.pid() != null
          && m.rank() != null) {
        rankOfPid.put(m.pid(), m.rank());
        exits.putIfAbsent(m.rank(), m);
      }
    }
    List<RankEvidence> all = joinPids(members, rankOfPid);
    Culprit c = hung(all);
    if (c == null) {
      c = namedPeer(all);
    }
    if (c == null) {
      c = earlierError(all);
    }
    if (c == null) {
      c = killed(exits);
    }
    if (c == null) {
      c = silent(all, exits);
    }
    if (c == null) {
      RankEvidence first = earliest(all, m -> true);
      c = culprit(Cause.FIRST_FAILURE, first, ranksOf(first), List.of(), all);
    }
    return c;
  }

  /** Incidents that name a pid but no rank (a kernel Xid, the OOM killer) take the pid's rank. */
  private static List<RankEvidence> joinPids(
      List<RankEvidence> members, Map<Long, Long> rankOfPid) {
    List<RankEvidence> out = new ArrayList<>(members.size());
    for (RankEvidence m : members) {
      Long r = m.pid() == null ? null : rankOfPid.get(m.pid());
      if (m.rank() == null && r != null) {
        m = m.withRank(r);
      }
      out.add(m);
    }
    return out;
  }

  private static Culprit hung(List<RankEvidence> all) {
    Long seq = null;
    String op = null;
    Set<Long> waiting = new TreeSet<>();
    for (RankEvidence m : all) {
      if (m.seqNum() != null && (seq == null || m.seqNum() < seq)) {
        seq = m.seqNum();
        op = m.opType();
      }
    }
    if (seq == null) {
      return null;
    }
    for (RankEvidence m : all) {
      if (seq.equals(m.seqNum()) && m.rank() != null) {
        waiting.add(m.rank());
      }
    }
    Map<Long, RankEvidence> behind = new TreeMap<>();
    for (RankEvidence m : all) {
      if (m.rank() != null
          && m.lastEnqueued() != null
          && m.lastEnqueued() < seq
          && !waiting.contains(m.rank())) {
        behind.putIfAbsent(m.rank(), m);
      }
    }
    if (behind.isEmpty()) {
      return null;
    }
    List<String> ev = new ArrayList<>();
    String what = (op == null ? "collective" : op) + " #" + seq;
    if (!waiting.isEmpty()) {
      ev.add("ranks " + join(waiting) + " timed out waiting in " + what);
    }
    for (RankEvidence b : behind.values()) {
      ev.add(
          "rank "
              + b.rank()
              + " had enqueued only up to #"
              + b.lastEnqueued()
              + (b.lastCompleted() == null ? "" : " (completed #" + b.lastCompleted() + ")")
              + ": it never issued "
              + what);
    }
    RankEvidence first = behind.values().iterator().next();
    return culprit(Cause.HUNG_OUTSIDE_COLLECTIVE, first, List.copyOf(behind.keySet()), ev, all);
  }

  /** NCCL named the remote end of a connection that failed: the link or that peer's host. */
  private static Culprit namedPeer(List<RankEvidence> all) {
    RankEvidence p = earliest(all, m -> m.peer() != null);
    if (p == null) {
      return null;
    }
    List<String> ev = new ArrayList<>();
    ev.add(
        (p.rank() == null ? "a rank" : "rank " + p.rank())
            + (p.host() == null ? "" : " on " + p.host())
            + " lost its connection to peer "
            + p.peer()
            + ": "
            + p.summary());
    return culprit(Cause.NAMED_PEER, p, ranksOf(p), ev, all);
  }

  private static Culprit earlierError(List<RankEvidence> all) {
    // a rank's own error first: the kernel's echo of it (Xid 43 as the process dies, stamped by
    // a kernel clock that may run early) says less, and an unjoined one names no rank
    RankEvidence e = earliest(all, m -> m.rootClass() && m.rank() != null && !m.kernelEcho());
    if (e == null) {
      e = earliest(all, m -> m.rootClass() && m.rank() != null);
    }
    if (e == null) {
      e = earliest(all, RankEvidence::rootClass);
    }
    if (e == null) {
      return null;
    }
    List<String> ev = new ArrayList<>();
    ev.add(
        (e.rank() == null ? "the job's" : "rank " + e.rank() + "'s")
            + " first error: "
            + e.summary());
    return culprit(Cause.EARLIER_ERROR, e, ranksOf(e), ev, all);
  }

  private static Culprit killed(Map<Long, RankEvidence> exits) {
    for (RankEvidence x : exits.values()) {
      if (x.exitCode() != null && (x.exitCode() == SIGKILL || x.exitCode() == 128 + 9)) {
        return culprit(
            Cause.KILLED,
            x,
            List.of(x.rank()),
            List.of(
                "rank "
                    + x.rank()
                    + " (pid "
                    + x.pid()
                    + ") was killed by signal 9 (SIGKILL)"
                    + " and printed no error of its own"),
            List.of(x));
      }
    }
    return null;
  }

  private static Culprit silent(List<RankEvidence> all, Map<Long, RankEvidence> exits) {
    Set<Long> timedOut = new TreeSet<>();
    for (RankEvidence m : all) {
      if (RankEvidence.TIMEOUT.equals(m.incidentClass()) && m.rank() != null) {
        timedOut.add(m.rank());
      }
    }
    if (timedOut.isEmpty()) {
      return null;
    }
    Set<Long> quiet = new TreeSet<>(exits.keySet());
    quiet.removeAll(timedOut);
    if (quiet.isEmpty() || quiet.size() == exits.size()) {
      return null;
    }
    RankEvidence first = exits.get(quiet.iterator().next());
    List<String> ev =
        List.of(
            "ranks "
                + join(timedOut)
                + " reported a collective timeout; rank(s) "
                + join(quiet)
                + " of torchrun's summary never did");
    return culprit(Cause.SILENT_RANK, first, List.copyOf(quiet), ev, all);
  }

  /** The culprit's GPU: as printed or joined by pid, else its local rank's (marked inferred). */
  private static Culprit culprit(
      Cause cause, RankEvidence root, List<Long> ranks, List<String> ev, List<RankEvidence> all) {
    String gpu = root.gpu();
    boolean inferred = false;
    List<String> evidence = new ArrayList<>(ev);
    if (gpu == null && root.rank() != null) {
      for (RankEvidence m : all) {
        if (root.rank().equals(m.rank()) && m.gpu() != null) {
          gpu = m.gpu();
          if (m.pid() != null && !RankEvidence.WORKER_EXIT.equals(m.incidentClass())) {
            evidence.add(
                m.incidentClass()
                    + " names pid "
                    + m.pid()
                    + ", which is rank "
                    + m.rank()
                    + ": GPU "
                    + gpu);
          }
          break;
        }
      }
    }
    if (gpu == null && root.rank() != null) {
      Long local = root.localRank();
      for (RankEvidence m : all) {
        if (local == null && root.rank().equals(m.rank())) {
          local = m.localRank();
        }
      }
      if (local != null) {
        gpu = String.valueOf(local);
        inferred = true;
      }
    }
    for (RankEvidence x : all) {
      if (RankEvidence.WORKER_EXIT.equals(x.incidentClass())
          && x.rank() != null
          && ranks.contains(x.rank())
          && x != root) {
        evidence.add(
            "torchrun's summary: rank "
                + x.rank()
                + " is pid "
                + x.pid()
                + ", exit code "
                + x.exitCode());
        break;
      }
    }
    return new Culprit(cause, root, ranks, gpu, inferred, evidence);
  }

  private static RankEvidence earliest(
      List<RankEvidence> all, java.util.function.Predicate<RankEvidence> p) {
    RankEvidence best = null;
    for (RankEvidence m : all) {
      if (p.test(m) && (best == null || m.before(best))) {
        best = m;
      }
    }
    return best;
  }

  private static List<Long> ranksOf(RankEvidence m) {
    return m == null || m.rank() == null ? List.of() : List.of(m.rank());
  }

  private static String join(Set<Long> ranks) {
    return String.join(", ", ranks.stream().map(String::valueOf).toList());
  }
}
