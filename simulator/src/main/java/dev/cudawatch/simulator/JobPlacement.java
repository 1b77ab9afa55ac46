package dev.cudawatch.simulator;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * Where a job's ranks run and how they were launched: rank {@code r} runs on host {@code r /
 * gpusPerHost}, local rank {@code r % gpusPerHost}, on the physical GPU of that number. The launch
 * decides what each rank's environment holds (what {@code cudawatch run} reads) and what its text
 * prints (a {@code [rankN]:} prefix, the device ordinal it uses).
 *
 * @param job the job id the launcher gives it
 * @param launch how the ranks were started
 * @param hosts the job's nodes, in rank order
 * @param gpusPerHost ranks (and GPUs) per node
 */
public record JobPlacement(String job, Launch launch, List<String> hosts, int gpusPerHost) {

  /** How the ranks were started; each sets the variables its launcher sets. */
  public enum Launch {
    /** torchrun: RANK, LOCAL_RANK, TORCHELASTIC_RUN_ID; every rank sees all GPUs, uses its own. */
    TORCHRUN,
    /** torchrun with {@code --log-line-prefix-template "[rank${rank}]:"}: ranks print prefixes. */
    TORCHRUN_PREFIXED,
    /**
     * {@code srun --gpus-per-task=1} under Slurm's device cgroup: SLURM_JOB_ID, SLURM_PROCID,
     * SLURM_LOCALID, SLURM_STEP_GPUS naming the physical GPU and CUDA_VISIBLE_DEVICES renumbered to
     * 0, so the rank's own messages say GPU 0 whatever card it holds.
     */
    SRUN_GPU_PER_TASK
  }

  /** One rank's place. */
  public record Slot(String host, int rank, int localRank, int gpu) {}

  public JobPlacement {
    hosts = List.copyOf(hosts);
    if (hosts.isEmpty() || gpusPerHost < 1) {
      throw new IllegalArgumentException("a job needs a host and a GPU");
    }
  }

  public int worldSize() {
    return hosts.size() * gpusPerHost;
  }

  public Slot slot(int rank) {
    return new Slot(hosts.get(rank / gpusPerHost), rank, rank % gpusPerHost, rank % gpusPerHost);
  }

  /** The rank of the job's process on GPU {@code gpu} of {@code host}. */
  public int rankOn(String host, int gpu) {
    return hosts.indexOf(host) * gpusPerHost + gpu;
  }

  /** The variables the launcher gave the rank, the ones {@code cudawatch run} reads. */
  public Map<String, String> env(int rank) {
    Slot s = slot(rank);
    Map<String, String> env = new LinkedHashMap<>();
    if (launch == Launch.SRUN_GPU_PER_TASK) {
      env.put("SLURM_JOB_ID", job);
      env.put("SLURM_PROCID", String.valueOf(rank));
      env.put("SLURM_LOCALID", String.valueOf(s.localRank()));
      env.put("SLURM_NTASKS", String.valueOf(worldSize()));
      env.put("SLURM_STEP_GPUS", String.valueOf(s.gpu()));
      env.put("CUDA_VISIBLE_DEVICES", "0");
    } else {
      env.put("TORCHELASTIC_RUN_ID", job);
      env.put("RANK", String.valueOf(rank));
      env.put("LOCAL_RANK", String.valueOf(s.localRank()));
      env.put("WORLD_SIZE", String.valueOf(worldSize()));
      env.put("LOCAL_WORLD_SIZE", String.valueOf(gpusPerHost));
      env.put(
          "CUDA_VISIBLE_DEVICES",
          IntStream.range(0, gpusPerHost)
              .mapToObj(String::valueOf)
              .collect(Collectors.joining(",")));
    }
    return env;
  }

  /** The device number the rank's own messages print ({@code cuda:N}, {@code GPU N}). */
  public int ordinal(int rank) {
    return launch == Launch.SRUN_GPU_PER_TASK ? 0 : slot(rank).localRank();
  }

  /** The line as the rank's output shows it: torchrun's prefix when the launch adds one. */
  public String print(int rank, String line) {
    if (launch != Launch.TORCHRUN_PREFIXED || line.startsWith("[rank")) {
      return line; // c10d's own lines already carry the prefix
    }
    return "[rank" + rank + "]:" + (line.startsWith("[") ? "" : " ") + line;
  }

  /** Every rank's slot, in rank order. */
  public List<Slot> slots() {
    List<Slot> out = new ArrayList<>();
    for (int r = 0; r < worldSize(); r++) {
      out.add(slot(r));
    }
    return out;
  }
}
