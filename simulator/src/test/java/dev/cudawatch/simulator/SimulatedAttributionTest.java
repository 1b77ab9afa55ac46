package dev.cudawatch.simulator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.ingest.attribution.GpuInventory;
import dev.cudawatch.ingest.attribution.RunAttribution;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** Simulated ranks carry what `cudawatch run` would learn from their environment, nothing more. */
class SimulatedAttributionTest {
  private static final List<String> HOSTS = List.of("gpu-node-01", "gpu-node-02");

  /** The node's nvidia-smi inventory, as `--query-gpu=index,uuid,pci.bus_id` prints it. */
  private static GpuInventory inventory(String host) {
    StringBuilder csv = new StringBuilder("index, uuid, pci.bus_id\n");
    for (int g = 0; g < 8; g++) {
      csv.append(g)
          .append(", ")
          .append(RunIdentity.uuid(host, g))
          .append(", 00000000:")
          .append(FleetSimulator.pci(g))
          .append(":00.0\n");
    }
    return GpuInventory.parseQuery(csv.toString());
  }

  @Test
  void everyLaunchShipsExactlyWhatTheAgentDerivesFromTheRanksEnvironment() {
    for (JobPlacement.Launch launch : JobPlacement.Launch.values()) {
      JobPlacement p = new JobPlacement("4242", launch, HOSTS, 8);
      for (int rank = 0; rank < p.worldSize(); rank++) {
        String host = p.slot(rank).host();
        RunAttribution agent = RunAttribution.of(p.env(rank), null, null, inventory(host));
        Map<String, String> attribution = new LinkedHashMap<>(agent.attribution());
        attribution.put("pid", "777"); // `cudawatch run` adds its child's pid
        RunIdentity sim = RunIdentity.of(p, rank, 777);
        String at = launch + " rank " + rank;
        assertEquals(agent.job(), sim.job(), at);
        assertEquals(agent.rank(), sim.rank(), at);
        assertEquals(agent.localRank(), sim.localRank(), at);
        assertEquals(agent.gpu(), sim.gpu(), at);
        assertEquals(agent.gpuUuid(), sim.gpuUuid(), at);
        assertEquals(attribution, sim.attribution(), at);
        assertEquals(rank % 8, sim.gpu(), "rank r runs on GPU r % 8 of host r / 8");
        assertEquals(HOSTS.get(rank / 8), host);
      }
    }
  }

  @Test
  void aRanksLineIsShippedAsCudawatchRunShipsIt() {
    JobPlacement p = new JobPlacement("train-9", JobPlacement.Launch.TORCHRUN, HOSTS, 8);
    SimLine l =
        new SimLine(
            1_795_000_000_000L,
            "gpu-node-02",
            "train-9",
            11,
            3,
            RecordKind.LOG,
            "gpu-node-02/train-9/rank-11.log",
            "a\rb",
            RunIdentity.of(p, 11, 31_011));
    LogRecord r = KafkaOutput.record(l, 5, "sim-1");
    assertEquals("run:train-9/rank11/stderr", r.source());
    assertEquals("stderr", r.stream());
    assertEquals("train-9", r.job());
    assertEquals(11, r.rank());
    assertEquals(3, r.localRank());
    assertEquals(3, r.gpu());
    assertEquals(RunIdentity.uuid("gpu-node-02", 3), r.gpuUuid());
    assertEquals("CUDA_VISIBLE_DEVICES device LOCAL_RANK + nvidia-smi", r.attribution().get("gpu"));
    assertEquals("0,1,2,3,4,5,6,7", r.attribution().get("visible_gpus"));
    assertEquals("b", r.text(), "a progress bar's redraws collapse to the last");
  }

  @Test
  void theFleetMixesLaunchesAndMostLinesPrintNeitherRankNorGpu() {
    FleetSimulator sim =
        new FleetSimulator(new SimSettings(4, 8, 300, 400, 10, 42, 1_795_000_000_000L));
    List<SimLine> lines = new ArrayList<>();
    sim.run(lines::add);
    Map<JobPlacement.Launch, Integer> jobs = new EnumMap<>(JobPlacement.Launch.class);
    Map<String, JobPlacement.Launch> launchOf = new HashMap<>();
    int prefixed = 0;
    int rankLines = 0;
    for (SimLine l : lines) {
      if (l.kind() != RecordKind.LOG) {
        continue;
      }
      rankLines++;
      assertTrue(l.who() != null, "every rank runs under cudawatch run: " + l);
      assertEquals(l.job(), l.who().job());
      assertEquals(l.rank(), l.who().rank());
      assertEquals(l.gpu(), l.who().gpu());
      JobPlacement.Launch launch =
          l.who().attribution().get("job").equals("SLURM_JOB_ID")
              ? JobPlacement.Launch.SRUN_GPU_PER_TASK
              : l.text().startsWith("[rank" + l.rank() + "]:")
                      && !l.text().startsWith("[rank" + l.rank() + "]:[")
                  ? JobPlacement.Launch.TORCHRUN_PREFIXED
                  : JobPlacement.Launch.TORCHRUN;
      if (l.text().startsWith("[rank" + l.rank() + "]:")) {
        prefixed++;
      }
      if (launch != JobPlacement.Launch.TORCHRUN) {
        launchOf.put(l.job(), launch);
      } else {
        launchOf.putIfAbsent(l.job(), launch);
      }
    }
    launchOf.values().forEach(v -> jobs.merge(v, 1, Integer::sum));
    assertEquals(3, jobs.size(), "every launch occurs: " + jobs);
    int all = jobs.values().stream().mapToInt(Integer::intValue).sum();
    assertTrue(
        jobs.get(JobPlacement.Launch.TORCHRUN_PREFIXED) * 2 < all,
        "most jobs print no rank: " + jobs);
    assertTrue(prefixed * 2 < rankLines, "a minority of lines carry [rankN]: " + prefixed);
    for (Expected e : sim.truth()) {
      if (e.type().equals("incident") && e.labels().containsKey("job")) {
        for (String k : List.of("host", "job", "rank", "gpu", "launch")) {
          assertTrue(e.labels().containsKey(k), "the truth names " + k + ": " + e);
        }
      }
    }
  }

  @Test
  void aSixteenRankJobDiesOfOneRanksFailureAndTheOthersTimeOut() {
    JobPlacement p = new JobPlacement("train-77", JobPlacement.Launch.TORCHRUN, HOSTS, 8);
    DistributedJobFailure d =
        new DistributedJobFailure(p, 11, "illegal_memory_access", 1_795_000_000_000L, 60_000, 3);
    List<SimLine> lines = new ArrayList<>();
    d.run(lines::add);
    for (int i = 1; i < lines.size(); i++) {
      assertTrue(lines.get(i - 1).timeMillis() <= lines.get(i).timeMillis(), "line " + i);
    }
    List<Expected> failures =
        d.truth().stream().filter(e -> e.type().equals("job_failure")).toList();
    assertEquals(1, failures.size());
    assertEquals(
        Map.of(
            "job",
            "train-77",
            "host",
            "gpu-node-02",
            "rank",
            "11",
            "gpu",
            "3",
            "consequences",
            "15"),
        failures.get(0).labels());
    assertEquals(
        15, d.truth().stream().filter(e -> e.name().equals("nccl_timeout")).count(), "15 ranks");
    assertTrue(
        IntStream.range(0, 16)
            .filter(r -> r != 11)
            .allMatch(
                r ->
                    lines.stream()
                        .anyMatch(
                            l ->
                                r == l.rank()
                                    && l.job().equals("train-77")
                                    && l.text().contains("Watchdog caught collective"))),
        "every other rank times out");
    assertTrue(
        lines.stream()
            .filter(l -> l.text().contains("illegal memory access"))
            .allMatch(l -> l.rank() == 11 && l.host().equals("gpu-node-02") && l.gpu() == 3));
    assertTrue(lines.stream().anyMatch(l -> l.job().equals("train-77-r1")), "the job restarts");
  }
}
