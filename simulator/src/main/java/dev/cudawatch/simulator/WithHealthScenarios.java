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

  public WithHealthScenarios(SimSettings s) {
    this.fleet = new FleetSimulator(s);
    this.health = new HealthScenarios(s);
  }

  public void run(Consumer<SimLine> out) {
    List<SimLine> extra = health.lines();
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
    all.addAll(health.truth());
    return all;
  }
}
