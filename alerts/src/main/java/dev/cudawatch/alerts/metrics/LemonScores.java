package dev.cudawatch.alerts.metrics;

import dev.cudawatch.diagnosis.taxonomy.Taxonomy;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The lemon score of each GPU: how many different jobs failed on it in the last 24 hours. One job
 * failing again and again is that job's problem; different jobs failing on one GPU point at the
 * GPU. Bounded: at most {@code maxGpus} GPUs (least recently failing forgotten first) and 1,000
 * jobs per GPU.
 */
final class LemonScores {
  /** The classes counted: those taxonomy.yaml marks {@code lemon_gpu: true}. */
  static final Set<String> COUNTED = Taxonomy.builtIn().lemonClasses();

  static final Duration WINDOW = Duration.ofHours(24);
  static final int MAX_JOBS = 1000;

  private final LinkedHashMap<String, Gpu> gpus;

  private record Gpu(String[] labels, Map<String, Instant> jobs) {}

  LemonScores(int maxGpus) {
    this.gpus =
        new LinkedHashMap<>(16, 0.75f, true) {
          private static final long serialVersionUID = 1L;

          @Override
          protected boolean removeEldestEntry(Map.Entry<String, Gpu> e) {
            return size() > maxGpus;
          }
        };
  }

  /** The score of the GPU under {@code key} now: different jobs failed on it in the window. */
  synchronized int score(String key, Instant now) {
    for (var e : gpus.entrySet()) { // not get(): a read must not make the GPU "recent"
      if (e.getKey().equals(key)) {
        Instant from = now.minus(WINDOW);
        return (int) e.getValue().jobs().values().stream().filter(t -> !t.isBefore(from)).count();
      }
    }
    return 0;
  }

  /**
   * Notes a failure of {@code job} on a GPU; returns the new scores of every GPU whose score
   * changed (0: remove the series), keyed by their label values.
   */
  synchronized Map<String[], Integer> failed(String key, String[] labels, String job, Instant now) {
    Map<String[], Integer> changed = new HashMap<>();
    Gpu g = gpus.computeIfAbsent(key, k -> new Gpu(labels, new LinkedHashMap<>()));
    g.jobs().put(job, now);
    if (g.jobs().size() > MAX_JOBS) {
      g.jobs().remove(g.jobs().keySet().iterator().next());
    }
    for (var it = gpus.entrySet().iterator(); it.hasNext(); ) {
      Gpu x = it.next().getValue();
      int before = x.jobs().size();
      x.jobs().values().removeIf(t -> t.isBefore(now.minus(WINDOW)));
      if (x.jobs().size() != before || x == g) {
        changed.put(x.labels(), x.jobs().size());
      }
      if (x.jobs().isEmpty()) {
        it.remove();
      }
    }
    return changed;
  }
}
