package dev.cudawatch.diagnosis.advice;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

class NcclAdviceTest {
  private final NcclAdvice nccl = new NcclAdvice();

  @Test
  void aDuplicateGpuNamesTheTwoRanksOnOneGpu() {
    Advice a =
        nccl.advise(
            Map.of(
                "nccl_error", "ncclInvalidUsage", "last_error", "Duplicate GPU detected : rank 1"));
    assertTrue(a.explanation().contains("Two ranks are on the same GPU"), a.explanation());
    assertTrue(a.nextSteps().get(0).contains("set_device(local_rank)"), a.nextSteps().toString());
  }

  @Test
  void invalidUsageAloneIsASetupBug() {
    Advice a = nccl.advise(Map.of("nccl_error", "ncclInvalidUsage"));
    assertTrue(a.explanation().contains("called incorrectly"), a.explanation());
    assertTrue(a.nextSteps().stream().noneMatch(s -> s.contains("set_device")));
  }

  @Test
  void eachResultCodeHasItsOwnReading() {
    assertTrue(
        nccl.advise(Map.of("nccl_error", "ncclUnhandledCudaError"))
            .explanation()
            .contains("CUDA call inside NCCL"));
    assertTrue(
        nccl.advise(Map.of("nccl_error", "ncclSystemError"))
            .nextSteps()
            .get(0)
            .contains("/dev/shm"));
    assertTrue(
        nccl.advise(Map.of("nccl_error", "ncclRemoteError"))
            .explanation()
            .contains("A peer failed"));
    assertTrue(
        nccl.advise(Map.of("nccl_error", "ncclInternalError"))
            .explanation()
            .contains("internal error"));
  }

  @Test
  void anAbortOrAnUnnamedErrorTakesTheClassAdvice() {
    assertNull(nccl.advise(Map.of()));
    assertNull(nccl.advise(Map.of("nccl_error", "ncclInvalidArgument")));
  }
}
