package dev.cudawatch.ingest.attribution;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The physical GPUs a process may use, in its own device order, from its environment: {@code
 * SLURM_STEP_GPUS}/{@code SLURM_JOB_GPUS} (physical indexes Slurm allocated), {@code
 * CUDA_VISIBLE_DEVICES} (indexes, GPU UUIDs or MIG instances) and {@code NVIDIA_VISIBLE_DEVICES}
 * (the container runtime's), mapped through the node's {@link GpuInventory}.
 */
public final class VisibleDevices {
  /** One device the process sees: its physical index (null if unresolved) and UUID. */
  public record Device(Integer index, String uuid) {}

  /** The devices in the process's order, and the variable they came from (null if none). */
  public record Result(List<Device> devices, String source) {
    public boolean known() {
      return source != null && !devices.isEmpty();
    }
  }

  /** The variables consulted, in order of trust. */
  public static final List<String> VARIABLES =
      List.of(
          "CUDA_VISIBLE_DEVICES", "SLURM_STEP_GPUS", "SLURM_JOB_GPUS", "NVIDIA_VISIBLE_DEVICES");

  private VisibleDevices() {}

  public static Result of(Map<String, String> env, GpuInventory inventory) {
    List<String> cuda = items(env.get("CUDA_VISIBLE_DEVICES"));
    List<String> slurm = items(env.get("SLURM_STEP_GPUS"));
    String slurmVar = "SLURM_STEP_GPUS";
    if (slurm.isEmpty()) {
      slurm = items(env.get("SLURM_JOB_GPUS"));
      slurmVar = "SLURM_JOB_GPUS";
    }
    if (!cuda.isEmpty()) {
      // Under Slurm's device cgroup CUDA_VISIBLE_DEVICES is renumbered from 0, while the
      // SLURM_*_GPUS indexes are the node's: take the physical ones when the lists match up.
      if (allIndexes(cuda) && slurm.size() == cuda.size() && allIndexes(slurm)) {
        return new Result(resolve(slurm, inventory), slurmVar);
      }
      return new Result(resolve(cuda, inventory), "CUDA_VISIBLE_DEVICES");
    }
    if (!slurm.isEmpty()) {
      return new Result(resolve(slurm, inventory), slurmVar);
    }
    List<String> nv = items(env.get("NVIDIA_VISIBLE_DEVICES"));
    if (nv.size() == 1 && nv.get(0).equals("all") && !inventory.isEmpty()) {
      return new Result(resolve(List.of(), inventory), "NVIDIA_VISIBLE_DEVICES");
    }
    if (!nv.isEmpty() && !List.of("all", "none", "void").contains(nv.get(0))) {
      return new Result(resolve(nv, inventory), "NVIDIA_VISIBLE_DEVICES");
    }
    return new Result(List.of(), null);
  }

  /** A comma list; CUDA stops at the first invalid entry, and so does this (empty = none). */
  static List<String> items(String v) {
    List<String> out = new ArrayList<>();
    if (v == null || v.isBlank()) {
      return out;
    }
    for (String s : v.split(",")) {
      String t = s.strip();
      if (t.isEmpty() || t.equals("-1") || t.equalsIgnoreCase("NoDevFiles")) {
        break;
      }
      out.add(t);
    }
    return out;
  }

  private static boolean allIndexes(List<String> xs) {
    return xs.stream().allMatch(s -> s.chars().allMatch(Character::isDigit));
  }

  private static List<Device> resolve(List<String> items, GpuInventory inventory) {
    List<Device> out = new ArrayList<>();
    if (items.isEmpty()) {
      inventory.gpus().forEach(g -> out.add(new Device(g.index(), g.uuid())));
      return out;
    }
    for (String s : items) {
      if (s.chars().allMatch(Character::isDigit)) {
        int i = Integer.parseInt(s);
        GpuInventory.Gpu g = inventory.byIndex(i);
        out.add(new Device(i, g == null ? null : g.uuid()));
      } else {
        GpuInventory.Gpu g = inventory.byUuid(s);
        out.add(
            new Device(
                g == null ? null : g.index(), s.startsWith("MIG") || g == null ? s : g.uuid()));
      }
    }
    return out;
  }
}
