package dev.cudawatch.alerts.handoff;

import dev.cudawatch.alerts.store.GpuHealthStore.GpuState;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * What a node's condition says, from its GPUs' latest recommendations: {@code True} while one of
 * them has an open recommendation (the worst one names the reason), {@code False} otherwise.
 *
 * @param problem the condition's status
 * @param reason CamelCase, as Kubernetes wants it
 * @param message for a person: each GPU with an open recommendation and why
 */
public record NodeCondition(boolean problem, String reason, String message) {
  /** The API server accepts longer, but a condition is read in {@code kubectl describe node}. */
  static final int MAX_MESSAGE = 1024;

  /** Open recommendations, worst first, and their reasons. */
  static final Map<String, String> REASONS =
      Map.of(
          "rma", "GpuRmaRecommended",
          "inspect", "GpuInspectionRecommended",
          "drain_and_reset", "GpuDrainAndResetRecommended",
          "reboot_node", "NodeRebootRecommended",
          "reset_gpu", "GpuResetRecommended",
          "check_slow_gpu", "SlowGpuSuspected");

  private static final List<String> ORDER =
      List.of("rma", "inspect", "drain_and_reset", "reboot_node", "reset_gpu", "check_slow_gpu");

  public static final String NO_PROBLEM = "NoGpuProblem";

  /**
   * The condition of a node with these GPUs at {@code now}: an escalated GPU (rung 1 or 2) counts
   * while it is held; another recommendation for {@code ttl} after its event time.
   */
  public static NodeCondition of(List<GpuState> gpus, Instant now, Duration ttl) {
    List<String[]> open = new ArrayList<>(); // {action, text}
    for (GpuState g : gpus) {
      String what = open(g, now, ttl);
      if (what != null) {
        open.add(
            new String[] {
              what,
              "GPU "
                  + (g.gpu() == null ? "?" : g.gpu())
                  + (g.gpuUuid() == null ? "" : " (" + g.gpuUuid() + ")")
                  + ": "
                  + what
                  + (g.reason() == null ? "" : ", " + g.reason())
            });
      }
    }
    if (open.isEmpty()) {
      return new NodeCondition(false, NO_PROBLEM, "cudawatch: no open GPU recommendation");
    }
    open.sort(Comparator.comparingInt(o -> ORDER.indexOf(o[0])));
    StringBuilder m = new StringBuilder("cudawatch recommends (observe-only; nothing was done): ");
    for (int i = 0; i < open.size(); i++) {
      m.append(i == 0 ? "" : "; ").append(open.get(i)[1]);
    }
    String msg = m.length() <= MAX_MESSAGE ? m.toString() : m.substring(0, MAX_MESSAGE - 3) + "...";
    return new NodeCondition(true, REASONS.get(open.get(0)[0]), msg);
  }

  /** The GPU's open recommendation, or null. */
  static String open(GpuState g, Instant now, Duration ttl) {
    if (g.ladderLevel() >= 2) {
      return "rma";
    }
    if (g.ladderLevel() == 1) {
      return "inspect";
    }
    boolean fresh = g.updated() == null || !g.updated().plus(ttl).isBefore(now);
    return fresh && REASONS.containsKey(g.recommendation()) ? g.recommendation() : null;
  }
}
