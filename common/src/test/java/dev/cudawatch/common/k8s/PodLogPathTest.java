package dev.cudawatch.common.k8s;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

class PodLogPathTest {
  @Test
  void kubeletPodLogDirectories() {
    PodLogPath p =
        PodLogPath.parse(
            "/var/log/pods/training_llm-worker-3_3f6b2a1c-8d4e-4b7a-9c2d-1e0f5a6b7c8d/trainer/0.log");
    assertEquals(
        new PodLogPath(
            "training", "llm-worker-3", "3f6b2a1c-8d4e-4b7a-9c2d-1e0f5a6b7c8d", "trainer"),
        p);
    assertEquals("training/llm-worker-3/trainer", p.key());
    assertEquals(
        "trainer",
        PodLogPath.parse("/host/var/log/pods/ns_pod.a_uid/trainer/2.log.20261122-101500")
            .container(),
        "a rotated file under a host mount");
  }

  @Test
  void containerLinks() {
    PodLogPath p =
        PodLogPath.parse(
            "/var/log/containers/llm-worker-3_training_trainer-"
                + "4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c.log");
    assertEquals(new PodLogPath("training", "llm-worker-3", null, "trainer"), p);
    assertEquals(
        "nccl-test",
        PodLogPath.parse(
                "/var/log/containers/p_ns_nccl-test-"
                    + "4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c.log")
            .container());
  }

  @Test
  void otherPathsAreNotPodLogs() {
    assertNull(PodLogPath.parse("/home/alice/slurm-4.out"));
    assertNull(PodLogPath.parse("/var/log/pods/no-underscores/trainer/0.log"));
    assertNull(PodLogPath.parse("/var/log/containers/short_ns_c-abc.log"));
    assertNull(PodLogPath.parse("/var/log/pods/" + "a".repeat(5000)));
  }
}
