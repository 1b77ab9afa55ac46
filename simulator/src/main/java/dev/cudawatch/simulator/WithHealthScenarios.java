package dev.cudawatch.simulator;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * Runs the fleet with the {@link HealthScenarios} interleaved in time order: each of the scenarios'
 * lines goes out just before the first fleet line written after it.
 */
public final class WithHealthScenarios {
  private final FleetSimulator fleet;
  private final HealthScenarios health;

  private final boolean enabled;

  public WithHealthScenarios(SimSettings s) {
    this(s, true);
  }

  /** With {@code enabled} false, the fleet alone (benchmarks that count the fleet's streams). */
  public WithHealthScenarios(SimSettings s, boolean enabled) {
    this.fleet = new FleetSimulator(s);
    this.health = new HealthScenarios(s);
    this.enabled = enabled;
  }

  public void run(Consumer<SimLine> out) {
    List<SimLine> extra = enabled ? health.lines() : List.of();
    int[] next = {0};
    fleet.run(
        l -> {
          while (next[0] < extra.size() && extra.get(next[0]).timeMillis() <= l.timeMillis()) {
            out.accept(extra.get(next[0]++));
          }
          out.accept(l);
        });
    while (next[0] < extra.size()) {
      out.accept(extra.get(next[0]++));
    }
  }

  /** The fleet's truth and the scenarios', once {@link #run} returned. */
  public List<Expected> truth() {
    List<Expected> all = new ArrayList<>(fleet.truth());
    if (enabled) {
      all.addAll(health.truth());
    }
    return all;
  }
}
