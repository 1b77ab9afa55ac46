package dev.cudawatch.ingest.attribution;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * What {@code cudawatch run} knows of its child from the environment: job, rank, local rank, GPU
 * and GPU UUID, and where each came from (the wire record's {@code attribution}).
 *
 * @param job job id, or null
 * @param rank global rank, or null
 * @param localRank local rank, or null
 * @param gpu physical GPU index when the process uses one GPU, or null
 * @param gpuUuid that GPU's (or MIG instance's) UUID, or null
 * @param attribution field to source, plus {@code tried} and {@code visible_gpus}
 */
public record RunAttribution(
    String job,
    Integer rank,
    Integer localRank,
    Integer gpu,
    String gpuUuid,
    Map<String, String> attribution) {

  /**
   * From the child's environment. {@code jobFlag} ({@code --job}) wins over the variables; the
   * inventory maps UUIDs and MIG instances to physical indexes (empty without nvidia-smi).
   */
  public static RunAttribution of(
      Map<String, String> env, String jobFlag, String configuredJob, GpuInventory inventory) {
    Map<String, String> attr = new LinkedHashMap<>();
    String job = null;
    if (jobFlag != null) {
      job = jobFlag;
      attr.put("job", "--job");
    } else {
      RankSources.Found<String> j = RankSources.job(env);
      if (j != null) {
        job = j.value();
        attr.put("job", j.source());
      } else if (configuredJob != null) {
        job = configuredJob;
        attr.put("job", "agent configuration");
      }
    }
    RankSources.Found<Integer> rank = RankSources.rank(env);
    if (rank != null) {
      attr.put("rank", rank.source());
    }
    RankSources.Found<Integer> local = RankSources.localRank(env);
    if (local != null) {
      attr.put("local_rank", local.source());
    }
    VisibleDevices.Result visible = VisibleDevices.of(env, inventory);
    Integer gpu = null;
    String uuid = null;
    if (visible.known()) {
      List<VisibleDevices.Device> ds = visible.devices();
      VisibleDevices.Device d = null;
      String how = visible.source();
      if (ds.size() == 1) {
        d = ds.get(0);
      } else if (local != null && local.value() < ds.size()) {
        // torchrun's convention: every rank sees all devices and uses cuda:LOCAL_RANK
        d = ds.get(local.value());
        how = visible.source() + " device " + local.source();
      }
      if (d != null) {
        gpu = d.index();
        uuid = d.uuid();
        if (gpu != null) {
          attr.put("gpu", how + (inventory.isEmpty() ? "" : " + nvidia-smi"));
        }
        if (uuid != null) {
          attr.put("gpu_uuid", how + (inventory.isEmpty() ? "" : " + nvidia-smi"));
        }
      }
      if (ds.stream().allMatch(x -> x.index() != null)) {
        attr.put(
            "visible_gpus",
            ds.stream().map(x -> String.valueOf(x.index())).collect(Collectors.joining(",")));
      }
    }
    if (local != null
        && !inventory.isEmpty()
        && VisibleDevices.VARIABLES.stream().noneMatch(env::containsKey)) {
      // no device variable: every GPU is visible, and torch's convention is cuda:LOCAL_RANK
      GpuInventory.Gpu d =
          local.value() < inventory.gpus().size() ? inventory.gpus().get(local.value()) : null;
      if (d != null) {
        gpu = d.index();
        uuid = d.uuid();
        String how =
            "inferred: every GPU visible, device " + local.source() + " (set_device(local_rank))";
        attr.put("gpu", how);
        if (uuid != null) {
          attr.put("gpu_uuid", how);
        }
      }
    }
    List<String> tried = new ArrayList<>();
    tried.add("cudawatch run environment (" + String.join(", ", VisibleDevices.VARIABLES) + ")");
    tried.add(inventory.isEmpty() ? "nvidia-smi (not available)" : "nvidia-smi");
    attr.put("tried", String.join(", ", tried));
    return new RunAttribution(
        job,
        rank == null ? null : rank.value(),
        local == null ? null : local.value(),
        gpu,
        uuid,
        attr);
  }

  /** Whether mapping the environment needs nvidia-smi (UUIDs, MIG instances, or to learn UUIDs). */
  public static boolean wantsInventory(Map<String, String> env) {
    for (String k : VisibleDevices.VARIABLES) {
      if (env.get(k) != null && !env.get(k).isBlank()) {
        return true;
      }
    }
    return false;
  }
}
