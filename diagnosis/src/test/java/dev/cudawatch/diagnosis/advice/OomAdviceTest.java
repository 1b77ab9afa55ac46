package dev.cudawatch.diagnosis.advice;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

class OomAdviceTest {
  private static final long GIB = 1L << 30;
  private static final long MIB = 1L << 20;
  private final OomAdvice oom = new OomAdvice();

  @Test
  void aRequestLargerThanTheCardIsWrongItself() {
    Advice a =
        oom.advise(Map.of("tried_to_allocate_bytes", 200 * GIB, "total_capacity_bytes", 80 * GIB));
    assertTrue(a.explanation().startsWith("The single request (200.00 GiB)"), a.explanation());
    assertTrue(a.nextSteps().get(0).contains("traceback"), a.nextSteps().toString());
  }

  @Test
  void reservedButUnallocatedMemoryIsFragmentation() {
    Advice a =
        oom.advise(
            Map.of(
                "tried_to_allocate_bytes", 2 * GIB,
                "total_capacity_bytes", 80 * GIB,
                "reserved_unallocated_bytes", 6 * GIB));
    assertTrue(a.explanation().contains("fragmented"), a.explanation());
    assertTrue(a.nextSteps().get(0).contains("expandable_segments"), a.nextSteps().toString());
  }

  @Test
  void memoryNeitherFreeNorThisProcesssBelongsToAnother() {
    Advice a =
        oom.advise(
            Map.of(
                "total_capacity_bytes", 80 * GIB,
                "free_bytes", GIB,
                "process_in_use_bytes", 40 * GIB,
                "allocated_bytes", 39 * GIB,
                "reserved_unallocated_bytes", 20 * MIB));
    assertTrue(
        a.explanation().startsWith("About 39.00 GiB of the GPU is held outside"), a.explanation());
  }

  @Test
  void theFrameworkHoldingMostOfTheCardIsTheModelOrALeak() {
    Advice a =
        oom.advise(
            Map.of(
                "total_capacity_bytes", 80 * GIB,
                "free_bytes", GIB,
                "process_in_use_bytes", 79 * GIB,
                "allocated_bytes", 75 * GIB,
                "framework", "pytorch"));
    assertTrue(
        a.explanation().startsWith("The framework itself holds 75.00 GiB of 80.00 GiB"),
        a.explanation());
    assertEquals(OomAdvice.MEMORY_SUMMARY, a.nextSteps().get(a.nextSteps().size() - 1));
  }

  @Test
  void withoutTellingFiguresTheClassAdviceApplies() {
    assertNull(oom.advise(Map.of("tried_to_allocate_bytes", 2 * GIB)));
    assertNull(oom.advise(Map.of()));
  }

  @Test
  void theFrameworkThatPrintedTheErrorGetsItsOwnNextSteps() {
    assertEquals(
        java.util.List.of(OomAdvice.MEMORY_SUMMARY),
        OomAdvice.frameworkSteps(Map.of("framework", "pytorch")));
    // a JAX or llama.cpp OOM is never told to print torch.cuda.memory_summary()
    for (String fw : new String[] {"jax", "llama.cpp", "onnxruntime", "tensorrt", "paddle"}) {
      assertTrue(
          OomAdvice.frameworkSteps(Map.of("framework", fw)).stream()
              .noneMatch(s -> s.contains("torch")),
          fw);
    }
    assertTrue(
        OomAdvice.frameworkSteps(Map.of("framework", "llama.cpp"))
            .get(0)
            .contains("--n-gpu-layers"));
    assertTrue(
        OomAdvice.frameworkSteps(Map.of("framework", "jax")).get(0).contains("BufferAssignment"));
    assertTrue(OomAdvice.frameworkSteps(Map.of()).get(0).contains("nvidia-smi"));
  }
}
