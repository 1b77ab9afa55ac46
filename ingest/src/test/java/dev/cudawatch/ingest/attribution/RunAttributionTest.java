package dev.cudawatch.ingest.attribution;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Job, rank and GPU from a wrapped job's environment, mapped through what nvidia-smi really printed
 * on an H100 node ({@code src/test/resources/node-h100/}, recorded 2026-11-22).
 */
class RunAttributionTest {
  private static final String H100_UUID = "GPU-a8aa2883-b011-67b6-4887-1b76e067f837";

  private static GpuInventory h100() throws IOException {
    return GpuInventory.parseQuery(
            Files.readString(Path.of("src/test/resources/node-h100/query-gpu.csv")))
        .withMig(Files.readString(Path.of("src/test/resources/node-h100/nvidia-smi-L.txt")));
  }

  /** Eight GPUs, two with MIG instances, in the format of nvidia-smi -L. */
  private static GpuInventory eight() {
    StringBuilder csv = new StringBuilder();
    StringBuilder list = new StringBuilder();
    for (int i = 0; i < 8; i++) {
      String uuid = String.format("GPU-%08x-0000-0000-0000-00000000000%d", 0x1000 + i, i);
      csv.append(i)
          .append(", ")
          .append(uuid)
          .append(String.format(", 00000000:%02X:00.0%n", 0x18 + i));
      list.append("GPU ")
          .append(i)
          .append(": NVIDIA H100 80GB HBM3 (UUID: ")
          .append(uuid)
          .append(")\n");
      if (i == 5) {
        list.append(
            "  MIG 3g.40gb     Device  0: (UUID: MIG-1b2c3d4e-5f60-7182-93a4-b5c6d7e8f901)\n");
        list.append(
            "  MIG 3g.40gb     Device  1: (UUID: MIG-2b2c3d4e-5f60-7182-93a4-b5c6d7e8f902)\n");
      }
    }
    return GpuInventory.parseQuery(csv.toString()).withMig(list.toString());
  }

  @Test
  void theRecordedH100InventoryParses() throws IOException {
    GpuInventory inv = h100();
    assertEquals(1, inv.gpus().size());
    GpuInventory.Gpu g = inv.gpus().get(0);
    assertEquals(0, g.index());
    assertEquals(H100_UUID, g.uuid());
    assertEquals("0000:00:06", g.pci(), "the kernel log's form of 00000000:00:06.0");
    assertEquals(g, inv.byPci("0000:00:06"));
    assertEquals(g, inv.byUuid("GPU-a8aa2883"), "CUDA accepts a unique UUID prefix");
  }

  @Test
  void anIndexIsThePhysicalGpuAndNvidiaSmiAddsItsUuid() throws IOException {
    RunAttribution a =
        RunAttribution.of(Map.of("CUDA_VISIBLE_DEVICES", "0"), "ima-1", null, h100());
    assertEquals(0, a.gpu());
    assertEquals(H100_UUID, a.gpuUuid());
    assertEquals("ima-1", a.job());
    assertEquals("--job", a.attribution().get("job"));
    assertEquals("CUDA_VISIBLE_DEVICES + nvidia-smi", a.attribution().get("gpu"));
    assertEquals("0", a.attribution().get("visible_gpus"));
  }

  @Test
  void withoutNvidiaSmiAnIndexStillNamesTheGpu() {
    RunAttribution a =
        RunAttribution.of(Map.of("CUDA_VISIBLE_DEVICES", "3"), null, null, GpuInventory.empty());
    assertEquals(3, a.gpu());
    assertNull(a.gpuUuid());
    assertEquals("CUDA_VISIBLE_DEVICES", a.attribution().get("gpu"));
    assertTrue(a.attribution().get("tried").contains("nvidia-smi (not available)"));
  }

  @Test
  void uuidAndMigFormsMapToThePhysicalIndex() {
    GpuInventory inv = eight();
    RunAttribution byUuid =
        RunAttribution.of(
            Map.of("CUDA_VISIBLE_DEVICES", "GPU-00001006-0000-0000-0000-000000000006"),
            null,
            null,
            inv);
    assertEquals(6, byUuid.gpu());
    RunAttribution mig =
        RunAttribution.of(
            Map.of("CUDA_VISIBLE_DEVICES", "MIG-2b2c3d4e-5f60-7182-93a4-b5c6d7e8f902"),
            null,
            null,
            inv);
    assertEquals(5, mig.gpu(), "a MIG instance belongs to its parent GPU");
    assertEquals("MIG-2b2c3d4e-5f60-7182-93a4-b5c6d7e8f902", mig.gpuUuid());
    RunAttribution legacy =
        RunAttribution.of(
            Map.of("CUDA_VISIBLE_DEVICES", "MIG-GPU-00001002-0000-0000-0000-000000000002/1/0"),
            null,
            null,
            inv);
    assertEquals(2, legacy.gpu());
  }

  @Test
  void torchrunRanksUseTheirLocalRanksDevice() {
    RunAttribution a =
        RunAttribution.of(
            Map.of(
                "CUDA_VISIBLE_DEVICES", "4,5,6,7",
                "RANK", "13",
                "LOCAL_RANK", "2",
                "TORCHELASTIC_RUN_ID", "tr-9"),
            null,
            null,
            eight());
    assertEquals(13, a.rank());
    assertEquals(2, a.localRank());
    assertEquals(6, a.gpu());
    assertEquals("tr-9", a.job());
    assertEquals("TORCHELASTIC_RUN_ID", a.attribution().get("job"));
    assertEquals("4,5,6,7", a.attribution().get("visible_gpus"));
    assertEquals("CUDA_VISIBLE_DEVICES device LOCAL_RANK + nvidia-smi", a.attribution().get("gpu"));
  }

  /** torchrun --standalone on a whole node sets no device variable: rank N uses cuda:N. */
  @Test
  void withNoDeviceVariableALocalRankNamesItsGpuMarkedInferred() {
    RunAttribution a =
        RunAttribution.of(
            Map.of("RANK", "3", "LOCAL_RANK", "3", "TORCHELASTIC_RUN_ID", "tr-1"),
            null,
            null,
            eight());
    assertEquals(3, a.gpu());
    assertTrue(a.attribution().get("gpu").startsWith("inferred"), a.attribution().toString());
    RunAttribution none =
        RunAttribution.of(
            Map.of("LOCAL_RANK", "3", "CUDA_VISIBLE_DEVICES", ""), null, null, eight());
    assertNull(none.gpu(), "an empty device list hides every GPU: nothing to infer");
  }

  @Test
  void slurmGivesPhysicalIndexesUnderItsDeviceCgroup() {
    // inside the step's cgroup CUDA renumbers from 0; SLURM_STEP_GPUS keeps the node's indexes
    RunAttribution a =
        RunAttribution.of(
            Map.of(
                "CUDA_VISIBLE_DEVICES", "0",
                "SLURM_STEP_GPUS", "3",
                "SLURM_JOB_GPUS", "2,3",
                "SLURM_PROCID", "1",
                "SLURM_LOCALID", "1",
                "SLURM_JOB_ID", "4242"),
            null,
            "ignored-config-job",
            GpuInventory.empty());
    assertEquals(3, a.gpu());
    assertEquals("SLURM_STEP_GPUS", a.attribution().get("gpu"));
    assertEquals(1, a.rank());
    assertEquals("SLURM_PROCID", a.attribution().get("rank"));
    assertEquals("SLURM_LOCALID", a.attribution().get("local_rank"));
    assertEquals("4242", a.job());
  }

  @Test
  void openMpiRanksAndTheContainerRuntimesDevices() throws IOException {
    // the recorded node: NVIDIA_VISIBLE_DEVICES=0 from the container runtime, no CUDA variable
    RunAttribution a =
        RunAttribution.of(
            Map.of("NVIDIA_VISIBLE_DEVICES", "0", "OMPI_COMM_WORLD_RANK", "7"), "j", null, h100());
    assertEquals(0, a.gpu());
    assertEquals(H100_UUID, a.gpuUuid());
    assertEquals("NVIDIA_VISIBLE_DEVICES + nvidia-smi", a.attribution().get("gpu"));
    assertEquals(7, a.rank());
  }

  @Test
  void nothingKnownSaysWhatWasTried() {
    RunAttribution a =
        RunAttribution.of(
            Map.of("RANK", "x", "CUDA_VISIBLE_DEVICES", ""), null, null, GpuInventory.empty());
    assertNull(a.gpu());
    assertNull(a.rank(), "a rank that is not a number is no rank");
    assertNull(a.job());
    assertEquals(List.of("tried"), List.copyOf(a.attribution().keySet()), "only what was tried");
    assertTrue(a.attribution().get("tried").contains("CUDA_VISIBLE_DEVICES"));
  }
}
