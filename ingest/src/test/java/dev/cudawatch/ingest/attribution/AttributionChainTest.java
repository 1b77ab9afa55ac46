package dev.cudawatch.ingest.attribution;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class AttributionChainTest {
  @Test
  void eachFieldFromTheMostTrustedSourceThatKnowsIt() {
    FileAttribution.Of slurm =
        new FileAttribution.Of(
            "4",
            null,
            null,
            null,
            null,
            Map.of(
                "job", "slurm path pattern slurm-%j.out", "visible_gpus", "1,2", "tried", "slurm"));
    FileAttribution.Of k8s =
        new FileAttribution.Of(
            null, null, null, null, null, Map.of("tried", "kubernetes: not a pod log path"));
    FileAttribution.Of proc =
        new FileAttribution.Of(
            "999",
            3,
            1,
            2,
            "GPU-2",
            Map.of(
                "job", "SLURM_JOB_ID",
                "rank", "RANK",
                "local_rank", "LOCAL_RANK",
                "gpu", "writing process's open /dev/nvidia2",
                "gpu_uuid", "CUDA_VISIBLE_DEVICES",
                "visible_gpus", "0,1,2,3",
                "pid", "77",
                "tried", "writing process"));
    FileAttribution.Of m = AttributionChain.merge(List.of(slurm, k8s, proc));
    assertEquals("4", m.job(), "Slurm's job before the process's environment");
    assertEquals("slurm path pattern slurm-%j.out", m.attribution().get("job"));
    assertEquals(3, m.rank());
    assertEquals("RANK", m.attribution().get("rank"));
    assertEquals(2, m.gpu(), "Slurm gave two GPUs: the process's open device says which");
    assertEquals("GPU-2", m.gpuUuid());
    assertEquals("writing process's open /dev/nvidia2", m.attribution().get("gpu"));
    assertEquals("1,2", m.attribution().get("visible_gpus"), "the job's devices, from Slurm");
    assertEquals("77", m.attribution().get("pid"));
    assertEquals(
        "slurm, kubernetes: not a pod log path, writing process", m.attribution().get("tried"));

    FileAttribution.Of one =
        new FileAttribution.Of(
            "4", null, null, 1, null, Map.of("gpu", "slurm sidecar", "tried", "slurm"));
    FileAttribution.Of both = AttributionChain.merge(List.of(one, proc));
    assertEquals(1, both.gpu(), "the trusted source's GPU");
    assertEquals(null, both.gpuUuid(), "not another source's UUID of another GPU");
  }
}
