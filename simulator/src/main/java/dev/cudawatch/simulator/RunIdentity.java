package dev.cudawatch.simulator;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;

/**
 * What {@code cudawatch run} ships on every record of one simulated rank: job, rank, local rank,
 * GPU, GPU UUID and the {@code attribution} map, the way the agent derives them from the rank's
 * environment and the node's {@code nvidia-smi} inventory ({@code ingest}'s RunAttribution, which
 * the simulator's tests check this against for every launch).
 *
 * @param job job id
 * @param rank global rank
 * @param localRank local rank
 * @param gpu physical GPU index
 * @param gpuUuid that GPU's UUID
 * @param attribution field to source, plus {@code tried}, {@code visible_gpus} and {@code pid}
 */
public record RunIdentity(
    String job,
    Integer rank,
    Integer localRank,
    Integer gpu,
    String gpuUuid,
    Map<String, String> attribution) {

  /** The variables the agent consults for devices, in its order (RunAttribution's "tried"). */
  static final List<String> DEVICE_VARIABLES =
      List.of(
          "CUDA_VISIBLE_DEVICES", "SLURM_STEP_GPUS", "SLURM_JOB_GPUS", "NVIDIA_VISIBLE_DEVICES");

  public RunIdentity {
    attribution = Map.copyOf(attribution);
  }

  /** Rank {@code rank} of {@code p}, wrapped by {@code cudawatch run} as process {@code pid}. */
  public static RunIdentity of(JobPlacement p, int rank, int pid) {
    JobPlacement.Slot s = p.slot(rank);
    Map<String, String> a = new LinkedHashMap<>();
    String visibleFrom;
    String gpuFrom;
    List<Integer> visible;
    if (p.launch() == JobPlacement.Launch.SRUN_GPU_PER_TASK) {
      a.put("job", "SLURM_JOB_ID");
      a.put("rank", "SLURM_PROCID");
      a.put("local_rank", "SLURM_LOCALID");
      // CUDA_VISIBLE_DEVICES=0 is the cgroup's renumbering; SLURM_STEP_GPUS names the card
      visibleFrom = "SLURM_STEP_GPUS";
      gpuFrom = visibleFrom;
      visible = List.of(s.gpu());
    } else {
      a.put("job", "TORCHELASTIC_RUN_ID");
      a.put("rank", "RANK");
      a.put("local_rank", "LOCAL_RANK");
      visibleFrom = "CUDA_VISIBLE_DEVICES";
      gpuFrom = visibleFrom + " device LOCAL_RANK"; // torchrun: every rank uses cuda:LOCAL_RANK
      visible = java.util.stream.IntStream.range(0, p.gpusPerHost()).boxed().toList();
    }
    a.put("gpu", gpuFrom + " + nvidia-smi");
    a.put("gpu_uuid", gpuFrom + " + nvidia-smi");
    a.put("visible_gpus", visible.stream().map(String::valueOf).collect(Collectors.joining(",")));
    a.put(
        "tried",
        "cudawatch run environment (" + String.join(", ", DEVICE_VARIABLES) + "), nvidia-smi");
    a.put("pid", String.valueOf(pid));
    return new RunIdentity(p.job(), rank, s.localRank(), s.gpu(), uuid(s.host(), s.gpu()), a);
  }

  /** The UUID nvidia-smi reports for GPU {@code gpu} of {@code host}: stable per card. */
  public static String uuid(String host, int gpu) {
    return "GPU-" + UUID.nameUUIDFromBytes((host + "/" + gpu).getBytes(StandardCharsets.UTF_8));
  }
}
