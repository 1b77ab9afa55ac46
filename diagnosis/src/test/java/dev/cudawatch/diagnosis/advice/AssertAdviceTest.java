package dev.cudawatch.diagnosis.advice;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

class AssertAdviceTest {
  private final AssertAdvice asserts = new AssertAdvice();

  @Test
  void anIndexingKernelPointsAtAnIndexOutOfRange() {
    Advice a = asserts.advise(Map.of("kernel_file", "IndexKernel.cu", "kernel_line", 92L));
    assertTrue(
        a.explanation()
            .startsWith("A device-side assert fired in IndexKernel.cu:92: an index out of range"),
        a.explanation());
    assertEquals(3, a.nextSteps().size());
  }

  @Test
  void aLossKernelPointsAtALabelOutOfRange() {
    Advice a = asserts.advise(Map.of("kernel_file", "Loss.cu", "kernel_line", 242L));
    assertTrue(a.explanation().contains("a target outside [0, num_classes)"), a.explanation());
    assertTrue(a.nextSteps().get(0).contains("labels"), a.nextSteps().toString());
  }

  @Test
  void anyOtherKernelBlamesItsInputData() {
    Advice a = asserts.advise(Map.of("kernel_file", "check_kernels.cu", "kernel_line", 57L));
    assertTrue(a.explanation().contains("an assert() inside a kernel failed"), a.explanation());
    assertEquals(2, a.nextSteps().size());
    Advice noFile = asserts.advise(Map.of());
    assertTrue(
        noFile.explanation().startsWith("A device-side assert fired: "), noFile.explanation());
  }
}
