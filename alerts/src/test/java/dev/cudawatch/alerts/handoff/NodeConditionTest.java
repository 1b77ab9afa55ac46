package dev.cudawatch.alerts.handoff;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.alerts.store.GpuHealthStore;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class NodeConditionTest {
  private static final Instant T0 = Instant.parse("2026-11-22T03:00:00Z");
  private static final Duration TTL = Duration.ofHours(24);

  @Test
  void theWorstOpenRecommendationNamesTheReasonAndEveryGpuIsListed() {
    GpuHealthStore s = new GpuHealthStore(10);
    s.add(NodeConditionWriterIT.rec("a", "reset_gpu", "n1", "0", 0, T0));
    s.add(NodeConditionWriterIT.rec("b", "inspect", "n1", "5", 1, T0));
    s.add(NodeConditionWriterIT.rec("c", "check_slow_gpu", "n1", "2", 0, T0));
    NodeCondition c = NodeCondition.of(s.onHost("n1"), T0, TTL);
    assertTrue(c.problem());
    assertEquals("GpuInspectionRecommended", c.reason());
    assertTrue(c.message().indexOf("GPU 5") < c.message().indexOf("GPU 0"), c.message());
    assertTrue(c.message().contains("GPU 2 (GPU-2): check_slow_gpu"), c.message());
  }

  @Test
  void noRecommendationOrOnlyStaleOnesIsFalse() {
    assertFalse(NodeCondition.of(List.of(), T0, TTL).problem());
    GpuHealthStore s = new GpuHealthStore(10);
    s.add(NodeConditionWriterIT.rec("a", "reboot_node", "n1", "0", 0, T0));
    assertEquals("NodeRebootRecommended", NodeCondition.of(s.onHost("n1"), T0, TTL).reason());
    NodeCondition later = NodeCondition.of(s.onHost("n1"), T0.plus(Duration.ofHours(25)), TTL);
    assertFalse(later.problem());
    assertEquals(NodeCondition.NO_PROBLEM, later.reason());
  }

  @Test
  void theMessageIsBounded() {
    GpuHealthStore s = new GpuHealthStore(1000);
    for (int i = 0; i < 200; i++) {
      s.add(NodeConditionWriterIT.rec("r" + i, "rma", "n1", "" + i, 2, T0));
    }
    NodeCondition c = NodeCondition.of(s.onHost("n1"), T0, TTL);
    assertEquals(NodeCondition.MAX_MESSAGE, c.message().length());
    assertEquals("GpuRmaRecommended", c.reason());
  }
}
