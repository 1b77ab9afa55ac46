package dev.cudawatch.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.ingest.AgentSettings;
import dev.cudawatch.ingest.AttributionSources;
import dev.cudawatch.ingest.KubernetesSourceSettings;
import dev.cudawatch.ingest.SlurmSourceSettings;
import dev.cudawatch.ingest.attribution.FileAttribution;
import dev.cudawatch.ingest.attribution.SlurmAttribution;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code cudawatch local} attributes followed logs through the agent runtime's chain ({@link
 * AttributionSources}), with the sources a workstation has.
 */
class LocalAttributionTest {
  @TempDir Path dir;

  private AgentSettings settings(Path sidecars) {
    return AgentSettings.builder()
        .slurm(
            new SlurmSourceSettings(
                null, sidecars.toString(), null, null, null, null, null, null, null))
        .kubernetes(
            new KubernetesSourceSettings(
                null, dir.resolve("no-kubelet.sock").toString(), null, null, null))
        .build();
  }

  @Test
  void aWorkstationScansProcessesWithoutSlurmOrKubernetes() {
    AgentSettings local =
        LocalCluster.workstation(settings(dir.resolve("no-sidecars")), "/nonexistent/nvidia-smi");
    assertFalse(local.slurm().enabled(), "no prolog sidecar directory: not a Slurm node");
    assertEquals("/nonexistent/nvidia-smi", local.nvidiaSmi());
    try (AttributionSources a = AttributionSources.open(local, Clock.systemUTC())) {
      assertTrue(a.off().contains("slurm (slurm.enabled: false)"), a.off().toString());
      assertTrue(
          a.off().stream().anyMatch(o -> o.startsWith("kubernetes (no ")), a.off().toString());
      assertNotNull(a.chain());
      assertEquals(1, a.chain().sources().size());
      assertTrue(a.chain().sources().get(0) instanceof FileAttribution, "the /proc scan");
    }
  }

  @Test
  void aSlurmNodeWithSidecarsKeepsSlurmFirst() throws Exception {
    Path sidecars = Files.createDirectories(dir.resolve("sidecars"));
    AgentSettings local = LocalCluster.workstation(settings(sidecars), null);
    assertTrue(local.slurm().enabled());
    assertEquals("nvidia-smi", local.nvidiaSmi(), "the agent's default when none was found");
    try (AttributionSources a = AttributionSources.open(local, Clock.systemUTC())) {
      assertTrue(a.chain().sources().get(0) instanceof SlurmAttribution);
      assertTrue(a.chain().sources().get(1) instanceof FileAttribution);
    }
  }
}
