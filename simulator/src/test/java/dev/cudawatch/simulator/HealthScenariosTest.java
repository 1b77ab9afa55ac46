package dev.cudawatch.simulator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.diagnosis.catalog.Catalog;
import dev.cudawatch.diagnosis.catalog.StepTimeExtractor;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The health scenarios are deterministic and in time order inside the fleet's output; the catalog
 * reads their step times (rank 6 of train-slowrank 1.6x slower after 60 s, every rank of
 * train-slowdown 1.5x after 120 s); the truth holds one slow rank, one slowdown and one repair
 * ladder escalation, on the GPU that fails a third time.
 */
class HealthScenariosTest {
  private static final long T0 = 1_795_000_000_000L;
  private static final SimSettings S = new SimSettings(2, 8, 330, 500, 10, 42, T0);
  private static final StepTimeExtractor STEPS = Catalog.builtIn().stepTimes();

  private static List<SimLine> run() {
    List<SimLine> out = new ArrayList<>();
    new WithHealthScenarios(S).run(out::add);
    return out;
  }

  private static double meanStep(List<SimLine> lines, String job, int rank, long from, long to) {
    return lines.stream()
        .filter(l -> job.equals(l.job()) && l.rank() != null && l.rank() == rank)
        .filter(l -> l.timeMillis() >= T0 + from && l.timeMillis() < T0 + to)
        .mapToDouble(l -> STEPS.secondsPerStep(l.text()))
        .average()
        .orElseThrow();
  }

  @Test
  void deterministicInOrderAndReadable() {
    List<SimLine> a = run();
    assertEquals(a, run(), "the same seed writes the same lines");
    for (int i = 1; i < a.size(); i++) {
      assertTrue(a.get(i - 1).timeMillis() <= a.get(i).timeMillis(), "time order at " + i);
    }
    assertEquals(0.5, meanStep(a, "train-slowrank", 6, 0, 60_000), 0.02);
    assertEquals(0.8, meanStep(a, "train-slowrank", 6, 60_000, 330_000), 0.03);
    assertEquals(0.5, meanStep(a, "train-slowrank", 5, 60_000, 330_000), 0.02);
    assertEquals(0.75, meanStep(a, "train-slowdown", 3, 120_000, 330_000), 0.03);
    assertEquals(0.5, meanStep(a, "train-steady", 3, 0, 330_000), 0.02);
    long xid48OnGpu2 =
        a.stream()
            .filter(
                l -> l.kind() == RecordKind.KERNEL && l.text().contains("(PCI:0000:38:00): 48,"))
            .count();
    assertEquals(3, xid48OnGpu2, "GPU 2 fails three times");
  }

  @Test
  void truthNamesEachInjection() {
    WithHealthScenarios sim = new WithHealthScenarios(S);
    sim.run(l -> {});
    List<Expected> health =
        sim.truth().stream().filter(e -> e.scenario().startsWith("health:")).toList();
    List<Expected> slow = health.stream().filter(e -> e.name().equals("slow_rank")).toList();
    assertEquals(1, slow.size());
    assertEquals("perf-node-02", slow.get(0).labels().get("host"));
    assertEquals("2", slow.get(0).labels().get("gpu"));
    assertEquals(1, health.stream().filter(e -> e.name().equals("job_slowdown")).count());
    List<Expected> ladder =
        health.stream().filter(e -> e.name().equals("GpuRepairLadder")).toList();
    assertEquals(1, ladder.size());
    assertEquals(T0 + 190_000, ladder.get(0).atMillis(), "the failure after two resets");
  }
}
