package dev.cudawatch.diagnosis.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.diagnosis.catalog.Catalog;
import dev.cudawatch.diagnosis.jobs.Culprit.Cause;
import dev.cudawatch.diagnosis.offline.OfflineClassifier;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The culprit of a distributed job, on a real recording and on each rule's edge. */
class CulpritAnalysisTest {
  static final Path HANG =
      Path.of("../../shared/corpus/multi-gpu-h200/hang-rank1.log").toAbsolutePath().normalize();

  static List<Incident> classify(Path... files) throws Exception {
    OfflineClassifier c =
        new OfflineClassifier(
            Catalog.builtIn(), Clock.fixed(Instant.parse("2026-01-01T00:00:00Z"), ZoneOffset.UTC));
    List<Incident> all = new ArrayList<>();
    for (Path f : files) {
      try (InputStream in = Files.newInputStream(f)) {
        all.addAll(c.classify(in, f.getFileName().toString(), n -> {}));
      }
    }
    return all;
  }

  /**
   * A real 4-rank DDP job on H200s where rank 1 stopped in host code: torchrun's summary names rank
   * 0 and the first timeout line is rank 3's, but only rank 1 never issued all-reduce #31.
   */
  @Test
  void theHungRankOfTheRealRecordingIsRankOneNotTheFirstToDieOrTheFirstToTimeOut()
      throws Exception {
    Culprit c = JobVerdicts.of(classify(HANG));
    assertEquals(Cause.HUNG_OUTSIDE_COLLECTIVE, c.cause());
    assertEquals(List.of(1L), c.ranks());
    assertEquals("1", c.gpu(), "rank 1 is local rank 1 under torchrun --standalone");
    assertTrue(c.gpuInferred());
    String ev = String.join("\n", c.evidence());
    assertTrue(ev.contains("ranks 0, 2, 3 timed out waiting in ALLREDUCE #31"), ev);
    assertTrue(ev.contains("rank 1 had enqueued only up to #30"), ev);
    assertTrue(ev.contains("rank 1 is pid 951"), ev);
  }

  @Test
  void aRanksOwnErrorOutranksTheOtherRanksTimeouts() {
    List<RankEvidence> m =
        List.of(
            timeout("t0", 0, 5000, 31),
            timeout("t2", 2, 5001, 31),
            ev("oom", "cuda_oom", 3L, null, 1000, true, null, null, null),
            exit("x3", 3, 903, 1),
            exit("x0", 0, 900, -6));
    Culprit c = CulpritAnalysis.analyze(m);
    assertEquals(Cause.EARLIER_ERROR, c.cause());
    assertEquals(List.of(3L), c.ranks());
    assertEquals("oom", c.root().id());
  }

  /** NCCL's own words for a broken link (NVIDIA/nccl issues 1405, 1232): the peer is named. */
  @Test
  void aConnectionNcclNamesThePeerOfIsTheNetworkNotARank() throws Exception {
    java.nio.file.Path log = java.nio.file.Files.createTempFile("ib", ".log");
    java.nio.file.Files.writeString(
        log,
        "[rank3]:[E1126 02:13:40.869676075 ProcessGroupNCCL.cpp:689] [Rank 3] Watchdog caught"
            + " collective operation timeout: WorkNCCL(SeqNum=12, OpType=ALLREDUCE, NumelIn=1,"
            + " NumelOut=1, Timeout(ms)=600000) ran for 600031 milliseconds before timing out.\n"
            + "kp-ddp-worker-0:3468:3905 [4] ib_plugin.c:1615 NCCL WARN NET/IB : Got completion"
            + " from peer 10.216.210.236<54862> with status=12 opcode=0 len=0 vendor err 129"
            + " (Recv) localGid fd00:1148:9000:5000:4:200:3:ff22\n");
    Culprit c = JobVerdicts.of(classify(log));
    java.nio.file.Files.delete(log);
    assertEquals(Cause.NAMED_PEER, c.cause());
    assertTrue(c.evidence().get(0).contains("peer 10.216.210.236"), c.evidence().toString());
  }

  @Test
  void aRankKilledBySigkillWithNoErrorOfItsOwnIsTheCulprit() {
    List<RankEvidence> m =
        List.of(exit("x0", 0, 900, -15), exit("x1", 1, 901, -9), exit("x2", 2, 902, -15));
    Culprit c = CulpritAnalysis.analyze(m);
    assertEquals(Cause.KILLED, c.cause());
    assertEquals(List.of(1L), c.ranks());
  }

  @Test
  void aKernelXidJoinsItsRankThroughThePidAndGivesItsGpu() {
    RankEvidence assertLine = ev("a", "device_assert", 3L, null, 1000, true, null, null, null);
    RankEvidence xid =
        new RankEvidence(
            "xid",
            "gpu_xid",
            "node-1",
            null,
            null,
            "3",
            "0000:3b:00.0",
            1200,
            true,
            null,
            null,
            null,
            null,
            1317L,
            null,
            null,
            false,
            "Xid 43");
    Culprit c =
        CulpritAnalysis.analyze(
            List.of(assertLine, xid, exit("x3", 3, 1317, -6), exit("x0", 0, 1314, -15)));
    assertEquals(Cause.EARLIER_ERROR, c.cause());
    assertEquals(List.of(3L), c.ranks());
    assertEquals("3", c.gpu());
    assertFalse(c.gpuInferred(), "observed through the Xid's pid, not inferred");
    assertTrue(
        String.join("\n", c.evidence()).contains("names pid 1317, which is rank 3"),
        c.evidence().toString());
  }

  /**
   * A real node (agent-assert-rank1): the kernel's Xid 43 for the asserting process, joined to rank
   * 1 by its pid, is stamped before the assert line by a kernel clock that runs early; the rank's
   * own assert is still the root, the Xid its echo.
   */
  @Test
  void theKernelsEchoOfARanksFaultDoesNotTakeTheFaultsPlace() {
    RankEvidence xid =
        new RankEvidence(
            "xid",
            "gpu_xid",
            "n",
            1L,
            1L,
            "1",
            "0000:00:07",
            900,
            true,
            null,
            null,
            null,
            null,
            1010L,
            null,
            null,
            true,
            "Xid 43");
    RankEvidence assertLine = ev("a", "device_assert", 1L, null, 1000, true, null, null, null);
    Culprit c = CulpritAnalysis.analyze(List.of(xid, assertLine));
    assertEquals("a", c.root().id());
    assertEquals("1", c.gpu(), "the Xid's GPU joins the rank");
  }

  @Test
  void aRankInTheSummaryThatNeverReportedTheTimeoutIsTheSilentOne() {
    List<RankEvidence> m =
        List.of(
            timeout("t0", 0, 5000, 12),
            timeout("t1", 1, 5001, 12),
            timeout("t3", 3, 5002, 12),
            exit("x0", 0, 900, -6),
            exit("x1", 1, 901, -6),
            exit("x2", 2, 902, -15),
            exit("x3", 3, 903, -6));
    Culprit c = CulpritAnalysis.analyze(m);
    assertEquals(Cause.SILENT_RANK, c.cause());
    assertEquals(List.of(2L), c.ranks());
  }

  private static RankEvidence timeout(String id, long rank, long t, long seq) {
    return new RankEvidence(
        id,
        "nccl_timeout",
        "n",
        rank,
        rank,
        null,
        null,
        t,
        false,
        seq,
        "ALLREDUCE",
        seq + 5,
        seq - 1,
        null,
        null,
        null,
        false,
        "timeout");
  }

  private static RankEvidence exit(String id, long rank, long pid, long code) {
    return new RankEvidence(
        id,
        "worker_exit",
        "n",
        rank,
        rank,
        null,
        null,
        9000,
        false,
        null,
        null,
        null,
        null,
        pid,
        code,
        null,
        false,
        "exit");
  }

  private static RankEvidence ev(
      String id,
      String cls,
      Long rank,
      String gpu,
      long t,
      boolean root,
      Long seq,
      Long enq,
      Long pid) {
    return new RankEvidence(
        id, cls, "n", rank, rank, gpu, null, t, root, seq, null, enq, null, pid, null, null, false,
        cls);
  }
}
