package dev.cudawatch.ingest.attribution;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The agent's sources for a followed file in order of trust (the scheduler's records, Slurm and
 * Kubernetes, before the process scan of /proc): each field comes from the first source that knows
 * it, and {@code attribution} says which; {@code tried} lists every source asked. The line's own
 * text still wins over all of them, downstream.
 */
public final class AttributionChain implements FileSource {
  private static final List<String> FIELDS =
      List.of("job", "rank", "local_rank", "gpu", "gpu_uuid");
  private final List<FileSource> sources;

  public AttributionChain(List<FileSource> sources) {
    this.sources = List.copyOf(sources);
  }

  public List<FileSource> sources() {
    return sources;
  }

  @Override
  public FileAttribution.Of of(String file) {
    List<FileAttribution.Of> found = new ArrayList<>(sources.size());
    for (FileSource s : sources) {
      found.add(s.of(file));
    }
    return merge(found);
  }

  /** Field by field, the first answer that knows it; GPU index and UUID from the same source. */
  static FileAttribution.Of merge(List<FileAttribution.Of> found) {
    Map<String, String> attr = new LinkedHashMap<>();
    List<String> tried = new ArrayList<>();
    String job = null;
    Integer rank = null;
    Integer localRank = null;
    Integer gpu = null;
    String uuid = null;
    for (FileAttribution.Of o : found) {
      Map<String, String> a = o.attribution() == null ? Map.of() : o.attribution();
      if (job == null && o.job() != null) {
        job = o.job();
        attr.put("job", a.getOrDefault("job", "agent"));
      }
      if (rank == null && o.rank() != null) {
        rank = o.rank();
        attr.put("rank", a.getOrDefault("rank", "agent"));
      }
      if (localRank == null && o.localRank() != null) {
        localRank = o.localRank();
        attr.put("local_rank", a.getOrDefault("local_rank", "agent"));
      }
      if (gpu == null && uuid == null && (o.gpu() != null || o.gpuUuid() != null)) {
        gpu = o.gpu();
        uuid = o.gpuUuid();
        if (gpu != null) {
          attr.put("gpu", a.getOrDefault("gpu", "agent"));
        }
        if (uuid != null) {
          attr.put("gpu_uuid", a.getOrDefault("gpu_uuid", "agent"));
        }
      }
      for (Map.Entry<String, String> e : a.entrySet()) {
        if (e.getKey().equals("tried")) {
          if (!e.getValue().isBlank()) {
            tried.add(e.getValue());
          }
        } else if (!FIELDS.contains(e.getKey())) {
          attr.putIfAbsent(e.getKey(), e.getValue());
        }
      }
    }
    attr.put("tried", String.join(", ", tried));
    return new FileAttribution.Of(job, rank, localRank, gpu, uuid, attr);
  }
}
