package dev.cudawatch.diagnosis.trend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.gpu.MemorySample;
import dev.cudawatch.common.gpu.NvidiaSmiCsv;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * One pattern per OOM, on histories shaped as real nvidia-smi recordings: the H100 field trial
 * ({@code field-h100/}), the H100 node's sampler ({@code node-h100/sampler-utc.csv}) and the H200
 * leak ({@code golden/nvidia_smi_during_leak.csv}).
 */
class OomHistoryTest {
  private static final long MIB = 1 << 20;
  private static final TrendSettings T = TrendSettings.defaults();

  /** The agent's headerless rows of a recording, comments skipped. */
  static List<MemorySample> recording(String path) throws Exception {
    NvidiaSmiCsv csv = NvidiaSmiCsv.agentFormat(ZoneOffset.UTC);
    List<MemorySample> out = new ArrayList<>();
    for (String row : Files.readAllLines(Path.of("src/test/resources", path))) {
      if (!row.startsWith("#")) {
        out.add(csv.parse(row).orElseThrow(() -> new AssertionError("unparsed: " + row)));
      }
    }
    return out;
  }

  /**
   * The field trial's flat start and its 40 GiB jump as recorded (0, then 593 MiB for 13 s, then
   * 43,221 MiB at t = 12.7 s), the card then holding at the jump's level every 500 ms for {@code
   * holdMs} until the OOM: the shape that came out with no {@code memory_before} once the plateau
   * outlasted the flat history before it.
   */
  static List<MemorySample> flatThenJump(long holdMs) throws Exception {
    List<MemorySample> xs = new ArrayList<>(recording("field-h100/nvidia-smi-samples.csv"));
    xs = new ArrayList<>(xs.subList(0, 26));
    MemorySample j = xs.get(25);
    assertEquals(43_221 * MIB, j.usedBytes(), "the recording's jump");
    for (long t = 500; t <= holdMs; t += 500) {
      xs.add(new MemorySample(j.epochMillis() + t, 0, j.pci(), j.usedBytes(), j.totalBytes()));
    }
    return xs;
  }

  private static OomHistory.Finding describe(
      List<MemorySample> xs, long oom, Map<String, Object> fields) {
    return OomHistory.describe(xs, oom, fields, T)
        .orElseThrow(() -> new AssertionError("no memory_before"));
  }

  private static double number(OomHistory.Finding f, String key) {
    Object v = f.fields().get(key);
    assertTrue(v instanceof Number, key + " in " + f.fields());
    return ((Number) v).doubleValue();
  }

  @Test
  void aFlatHistoryThenOneJumpIsASuddenSpikeWithTheJumpsSizeAndTime() throws Exception {
    // 5 s after the jump the old check saw it; after 30 s and 90 s it saw nothing
    for (long hold : new long[] {5_000, 30_000, 90_000}) {
      List<MemorySample> xs = flatThenJump(hold);
      long jumpAt = xs.get(25).epochMillis();
      long oom = jumpAt + hold + 200;
      OomHistory.Finding f =
          describe(xs, oom, Map.of("tried_to_allocate_bytes", 40L << 30, "gpu", 0L));
      assertEquals("sudden_spike", f.memoryBefore(), "held " + hold + " ms: " + f);
      assertEquals((43_221 - 593) * MIB, number(f, "memory_jump_bytes"), "from 593 to 43,221 MiB");
      assertEquals((hold + 200) / 1000.0, number(f, "memory_jump_seconds_before"), 0.05);
      assertEquals(0.53, number(f, "memory_used_fraction"), 0.005);
      assertTrue(f.nextStep().contains("sudden spike of 42628 MiB"), f.nextStep());
    }
  }

  @Test
  void theNodesRealTwoSampleJumpIsOneSpike() throws Exception {
    // 0, 39, 22,031, 23,055 MiB: nvidia-smi caught the allocation half-way, 500 ms apart
    List<MemorySample> xs = recording("node-h100/sampler-utc.csv");
    MemorySample last = xs.get(xs.size() - 1);
    OomHistory.Finding f = describe(xs, last.epochMillis() + 300, Map.of());
    assertEquals("sudden_spike", f.memoryBefore());
    assertEquals((23_055 - 39) * MIB, number(f, "memory_jump_bytes"));
    assertEquals(0.8, number(f, "memory_jump_seconds_before"), 0.05); // the jump ended at 49.254
  }

  @Test
  void theFieldTrialsLeakIsASteadyLeakWithItsGrowth() throws Exception {
    List<MemorySample> xs = recording("field-h100/nvidia-smi-samples.csv");
    long oom = xs.get(0).epochMillis() + 51_000;
    OomHistory.Finding f =
        describe(
            xs,
            oom,
            Map.of("tried_to_allocate_bytes", 128 * MIB, "reserved_unallocated_bytes", 97 * MIB));
    assertEquals("steady_leak", f.memoryBefore());
    assertEquals(995.0 * MIB, number(f, "memory_growth_bytes_per_second"), 0.25 * 995 * MIB);
    assertTrue(number(f, "memory_used_fraction") > 0.95, f.toString());
    assertTrue(number(f, "memory_window_seconds") >= 45, "the whole recording before the OOM");
  }

  @Test
  void theH200LeakIsASteadyLeak() throws Exception {
    Path p = Path.of("src/test/resources/golden/nvidia_smi_during_leak.csv");
    List<String> rows = Files.readAllLines(p);
    NvidiaSmiCsv csv = NvidiaSmiCsv.fromHeader(rows.get(0), ZoneOffset.UTC).orElseThrow();
    List<MemorySample> xs =
        rows.subList(1, rows.size()).stream().map(r -> csv.parse(r).orElseThrow()).toList();
    long oom = xs.get(xs.size() - 1).epochMillis() + 200;
    assertEquals("steady_leak", describe(xs, oom, Map.of()).memoryBefore());
  }

  @Test
  void freeReservedMemoryAtLeastTheRequestIsFragmentation() throws Exception {
    List<MemorySample> xs = flatThenJump(30_000);
    long oom = xs.get(xs.size() - 1).epochMillis() + 200;
    OomHistory.Finding f =
        describe(
            xs,
            oom,
            Map.of(
                "tried_to_allocate_bytes", 1024 * MIB, "reserved_unallocated_bytes", 4096 * MIB));
    assertEquals("fragmentation", f.memoryBefore());
    assertEquals(0.53, number(f, "memory_used_fraction"), 0.005);
  }

  @Test
  void aFlatHistoryIsSteadyHighAtWhateverLevel() throws Exception {
    MemorySample j = flatThenJump(0).get(25);
    for (long usedMib : new long[] {78_000, 43_221}) {
      List<MemorySample> xs = new ArrayList<>();
      for (int i = 0; i < 120; i++) {
        long noise = (i % 3) * 64; // the allocator's to and fro around a level
        xs.add(
            new MemorySample(
                j.epochMillis() + 500L * i, 0, j.pci(), (usedMib + noise) * MIB, j.totalBytes()));
      }
      long oom = xs.get(xs.size() - 1).epochMillis() + 200;
      OomHistory.Finding f = describe(xs, oom, Map.of("tried_to_allocate_bytes", 8L << 30));
      assertEquals("steady_high", f.memoryBefore(), usedMib + " MiB");
      assertEquals(usedMib / 81_559.0, number(f, "memory_used_fraction"), 0.005);
      assertEquals(60.0, number(f, "memory_window_seconds"), 0.5);
      assertTrue(
          f.nextStep().contains(usedMib > 70_000 ? "does not fit" : "did not fit"), f.nextStep());
    }
  }

  @Test
  void aModelLoadMinutesBeforeIsNoSpikeAndASpikeThatPassedIsNoneEither() throws Exception {
    List<MemorySample> loaded = flatThenJump(5 * 60_000);
    long oom = loaded.get(loaded.size() - 1).epochMillis() + 200;
    assertEquals("steady_high", describe(loaded, oom, Map.of()).memoryBefore());

    List<MemorySample> passed = flatThenJump(5_000);
    MemorySample top = passed.get(passed.size() - 1);
    for (int i = 1; i <= 20; i++) { // an evaluation step's memory, freed again
      passed.add(
          new MemorySample(
              top.epochMillis() + 500L * i, 0, top.pci(), 593 * MIB, top.totalBytes()));
    }
    long later = passed.get(passed.size() - 1).epochMillis() + 200;
    assertEquals("steady_high", describe(passed, later, Map.of()).memoryBefore());
  }

  @Test
  void noSampleInTheLookBackLeavesTheOomWithout() throws Exception {
    List<MemorySample> xs = flatThenJump(5_000);
    long last = xs.get(xs.size() - 1).epochMillis();
    assertEquals(
        Optional.empty(), OomHistory.describe(xs, last + OomHistory.LOOK_BACK_MS + 1, Map.of(), T));
    assertEquals(
        Optional.empty(),
        OomHistory.describe(xs, xs.get(0).epochMillis() - 1, Map.of(), T),
        "only samples after the OOM");
    assertEquals(
        Optional.empty(), OomHistory.describe(List.of(), last, Map.of(), T), "no samples at all");
  }

  @Test
  void theStreamsHistoryKeepsAFlatHalfHourBoundedAndAnOomReadMinutesLateStillSeesItsJump()
      throws Exception {
    MemorySample j = flatThenJump(0).get(25);
    long t0 = j.epochMillis();
    MemoryTrendDetector d = new MemoryTrendDetector(T);
    long t = t0;
    for (; t < t0 + 20 * 60_000; t += 500) { // 20 minutes flat at 2 GiB
      d.add(new MemorySample(t, 0, j.pci(), 2048 * MIB, j.totalBytes()));
    }
    long jumpAt = t;
    for (; t < jumpAt + 20_000; t += 500) { // a 40 GiB jump, held 20 s to the OOM
      d.add(new MemorySample(t, 0, j.pci(), 43_000 * MIB, j.totalBytes()));
    }
    long oom = t;
    for (; t < oom + 5 * 60_000; t += 500) { // the card freed; the OOM's line comes 5 min late
      d.add(new MemorySample(t, 0, j.pci(), 0, j.totalBytes()));
    }
    List<MemorySample> kept = d.samples();
    assertTrue(kept.size() <= MemoryTrendDetector.HISTORY_SAMPLES, kept.size() + " samples kept");
    OomHistory.Finding f = describe(kept, oom, Map.of());
    assertEquals("sudden_spike", f.memoryBefore());
    assertEquals((43_000 - 2048) * MIB, number(f, "memory_jump_bytes"));
    assertEquals(20.0, number(f, "memory_jump_seconds_before"), 0.05); // a jump is never thinned
    assertEquals(
        kept,
        MemoryTrendDetector.resume(T, kept).samples(),
        "a restored detector keeps the same history");
  }
}
