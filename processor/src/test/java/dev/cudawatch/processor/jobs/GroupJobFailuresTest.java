package dev.cudawatch.processor.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.JobFailure;
import dev.cudawatch.diagnosis.advice.Advisor;
import dev.cudawatch.diagnosis.catalog.Catalog;
import dev.cudawatch.diagnosis.catalog.CatalogLoader;
import dev.cudawatch.diagnosis.engine.ClassifierSettings;
import dev.cudawatch.diagnosis.engine.LineMeta;
import dev.cudawatch.diagnosis.engine.StreamClassifier;
import dev.cudawatch.diagnosis.engine.StreamContext;
import dev.cudawatch.diagnosis.engine.StreamState;
import dev.cudawatch.diagnosis.taxonomy.IncidentClass;
import dev.cudawatch.diagnosis.taxonomy.JobRole;
import dev.cudawatch.diagnosis.taxonomy.Taxonomy;
import dev.cudawatch.processor.functions.IncidentAlerts;
import dev.cudawatch.processor.records.JobFailureCodec;
import dev.cudawatch.processor.records.KryoFree;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;

/**
 * A simulated 16-rank job on two hosts (8 GPUs each): rank 11 hits a real PyTorch illegal memory
 * access, every other rank times out in NCCL ten minutes later. The real classifier turns each
 * rank's output into incidents; the job failure names rank 11, its host and GPU, with the 15
 * timeouts as its consequences, in one alert.
 */
class GroupJobFailuresTest {
  private static final Catalog CATALOG = new CatalogLoader().loadTexts(Map.of());
  private static final Instant T0 = Instant.parse("2026-11-22T03:00:00Z");
  private static final Duration GAP = Duration.ofMinutes(15);

  /** The incidents the classifier makes of one rank's lines. */
  private static List<Incident> rank(int rank, List<String> lines, Instant at) {
    return rank(rank, lines, at, false);
  }

  /**
   * The incidents of one rank's lines, or of the kernel's lines about it ({@code kernel}: only the
   * kernel's lines make Xid incidents; the pipeline then attributes them to the rank's job).
   */
  private static List<Incident> rank(int rank, List<String> lines, Instant at, boolean kernel) {
    String host = rank < 8 ? "node-a" : "node-b";
    StreamClassifier c =
        new StreamClassifier(
            CATALOG,
            new Advisor(CATALOG.taxonomy()),
            new StreamContext(host, "train-77", "run:train-77/rank" + rank + "/stderr"),
            ClassifierSettings.defaults(),
            new StreamState());
    List<Incident> out = new ArrayList<>();
    for (int n = 0; n < lines.size(); n++) {
      LineMeta meta =
          new LineMeta(
              "r" + rank + "@" + n,
              at.plusMillis(n),
              rank,
              rank % 8,
              rank % 8,
              null,
              Map.of("rank", "RANK", "local_rank", "LOCAL_RANK", "gpu", "CUDA_VISIBLE_DEVICES"),
              kernel);
      out.addAll(c.accept(lines.get(n), meta, at.plusMillis(n)));
    }
    out.addAll(c.flush(at.plusSeconds(1)));
    return out;
  }

  private static String timeout(int r) {
    return "[rank"
        + r
        + "]:[E1122 03:10:00.000000 1 ProcessGroupNCCL.cpp:632] [Rank "
        + r
        + "] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE,"
        + " NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600042 milliseconds before timing"
        + " out.";
  }

  private static KeyedOneInputStreamOperatorTestHarness<String, Incident, JobFailure> harness()
      throws Exception {
    KeyedOneInputStreamOperatorTestHarness<String, Incident, JobFailure> h =
        KryoFree.harness(
            new KeyedOneInputStreamOperatorTestHarness<>(
                new KeyedProcessOperator<>(new GroupJobFailures(GAP)), Incident::job, Types.STRING),
            JobFailureCodec.TYPE.serializer());
    h.open();
    return h;
  }

  @Test
  void sixteenRanksOneRootCause() throws Exception {
    List<Incident> all = new ArrayList<>();
    all.addAll(rank(11, Files.readAllLines(Path.of("../samples/illegal_address_torch.log")), T0));
    for (int r = 0; r < 16; r++) {
      if (r != 11) {
        all.addAll(rank(r, List.of(timeout(r)), T0.plusSeconds(600)));
      }
    }
    assertEquals(16, all.size(), "one incident per rank: " + all);
    assertTrue(
        all.stream().filter(IncidentAlerts::rankOfAJob).count() == 16, "no rank pages on its own");
    Collections.shuffle(all, new java.util.Random(7)); // hosts' records interleave in any order
    try (var h = harness()) {
      h.setProcessingTime(0);
      for (Incident i : all) {
        h.processElement(i, i.eventTime().toEpochMilli());
      }
      h.processWatermark(new Watermark(T0.plusSeconds(600).plus(GAP).toEpochMilli()));
      List<JobFailure> failures = h.extractOutputValues();
      assertEquals(1, failures.size(), "one job failure");
      JobFailure f = failures.get(0);
      assertEquals("train-77", f.job());
      assertEquals("illegal_memory_access", f.rootClass());
      assertEquals(11, f.rank());
      assertEquals("node-b", f.host());
      assertEquals("3", f.gpu());
      assertEquals(15, f.consequenceCount());
      assertEquals(15, f.consequences().size());
      assertEquals(List.of("node-a", "node-b"), f.hosts());
      assertEquals(16, f.ranks());

      List<Alert> alerts = new ArrayList<>();
      for (StreamRecord<Alert> a : h.getSideOutput(GroupJobFailures.ALERTS)) {
        alerts.add(a.getValue());
      }
      assertEquals(
          1,
          alerts.stream().map(Alert::fingerprint).distinct().count(),
          "one alert for the job (raised, then updated in place): " + alerts);
      Alert last = alerts.get(alerts.size() - 1);
      assertEquals("JobFailure", last.alertName());
      assertEquals("train-77", last.labels().get("job"));
      assertEquals("11", last.annotations().get("root_rank"));
      assertEquals("node-b", last.annotations().get("root_host"));
      assertEquals("3", last.annotations().get("root_gpu"));
      assertEquals("15", last.annotations().get("consequences"));
      assertTrue(last.annotations().get("summary").contains("rank 11 on node-b GPU 3"));
      assertTrue(
          alerts.stream().allMatch(a -> "11".equals(a.annotations().get("root_rank"))),
          "no alert ever named a timed-out rank as the cause");

      // a straggler of the same failure is not a second failure; then nothing remains
      h.processElement(rank(4, List.of(timeout(4)), T0.plusSeconds(700)).get(0), 1);
      h.setProcessingTime(2 * GAP.toMillis() + 1);
      assertEquals(1, h.extractOutputValues().size());
      assertEquals(0, h.numKeyedStateEntries(), "no state left");
      assertEquals(0, h.numEventTimeTimers() + h.numProcessingTimeTimers(), "no timers left");
    }
  }

  /** A single process (no rank anywhere: a plain job's OOM) still makes its one record. */
  @Test
  void aJobWithoutRanksClosesWithItsRootAndNoRank() throws Exception {
    try (var h = harness()) {
      h.setProcessingTime(1000);
      StreamClassifier c =
          new StreamClassifier(
              CATALOG,
              new Advisor(CATALOG.taxonomy()),
              new StreamContext("node-a", "train-77", "/logs/oom.log"),
              ClassifierSettings.defaults(),
              new StreamState());
      List<Incident> out =
          new ArrayList<>(
              c.accept(
                  "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
                  new LineMeta("r@0", T0, null, null),
                  T0));
      out.addAll(c.flush(T0.plusSeconds(1)));
      for (Incident i : out) {
        h.processElement(i, i.eventTime().toEpochMilli());
      }
      h.setProcessingTime(1000 + GAP.toMillis());
      JobFailure f = h.extractOutputValues().get(0);
      assertEquals("cuda_oom", f.rootClass());
      assertEquals(null, f.rank());
      assertEquals("earlier_error", f.cause());
      h.setProcessingTime(1000 + 2 * GAP.toMillis());
      assertEquals(0, h.numKeyedStateEntries());
    }
  }

  @Test
  void anIdleFleetStillClosesTheFailureInProcessingTime() throws Exception {
    try (var h = harness()) {
      h.setProcessingTime(1000);
      for (Incident i : rank(2, List.of(timeout(2)), T0)) {
        h.processElement(i, i.eventTime().toEpochMilli());
      }
      assertTrue(h.extractOutputValues().isEmpty());
      h.setProcessingTime(1000 + GAP.toMillis());
      JobFailure f = h.extractOutputValues().get(0);
      assertEquals("nccl_timeout", f.rootClass(), "with nothing else, the timeout is the cause");
      assertEquals(0, f.consequenceCount());
      h.setProcessingTime(1000 + 2 * GAP.toMillis());
      assertEquals(0, h.numKeyedStateEntries());
      assertEquals(0, h.numEventTimeTimers() + h.numProcessingTimeTimers());
    }
  }

  @Test
  void aDerivedXidIsAConsequence() {
    Incident x =
        rank(
                0,
                List.of(
                    "NVRM: Xid (PCI:0000:3b:00): 13, pid=674, name=python3, Graphics Exception, caused by previous Xid 31"),
                T0,
                true)
            .get(0);
    assertTrue(JobMember.derivedXid(x), x.excerpt().toString());
    assertFalse(JobMember.of(x).rootClass);
  }

  @Test
  void whichClassesAreConsequencesIsTheTaxonomys() {
    for (IncidentClass c : Taxonomy.builtIn().classes()) {
      Incident i = Incident.builder("i-" + c.id(), c.id()).host("h").eventTime(T0).build();
      assertEquals(c.jobRole() == JobRole.ROOT, JobMember.of(i).rootClass, c.id());
    }
  }
}
