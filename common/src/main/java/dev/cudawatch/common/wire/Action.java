package dev.cudawatch.common.wire;

import java.time.Instant;
import java.util.Map;
import java.util.Objects;

/**
 * A recommendation for remediation, on {@code cudawatch.actions}: what the GPU health ledger would
 * do about a GPU, or what a rule in shadow mode would have alerted. cudawatch never acts on it: it
 * is observe-only, for a person or a remediation system (NVSentinel, a node-problem-detector
 * condition) to take up.
 *
 * @param v wire version
 * @param id stable id: the same recommendation re-sent keeps it
 * @param kind {@code recommendation} (the ledger) or {@code shadow_alert} (a rule in shadow mode)
 * @param action {@code reset_gpu}, {@code reboot_node}, {@code drain_and_reset}, {@code inspect},
 *     {@code rma}, {@code check_slow_gpu}, {@code none}; for a shadow alert the alert's name
 * @param reason why, for a person
 * @param host the node
 * @param gpu the GPU index on it, or null
 * @param gpuUuid the GPU's UUID, or null
 * @param job the job of the incident behind it, or null
 * @param xid the Xid behind it, or null
 * @param incidentId the incident behind it, or null
 * @param ladderLevel 0: the driver's own recovery; 1: inspection; 2: RMA
 * @param recoveries resets or reboots asked for this GPU so far
 * @param incidents failures counted on this GPU
 * @param mtbiSeconds mean time between this GPU's failures, or null before the second
 * @param at event time of the incident behind it
 * @param labels a shadow alert's labels (empty otherwise)
 */
public record Action(
    int v,
    String id,
    String kind,
    String action,
    String reason,
    String host,
    String gpu,
    String gpuUuid,
    String job,
    Integer xid,
    String incidentId,
    int ladderLevel,
    int recoveries,
    int incidents,
    Double mtbiSeconds,
    Instant at,
    Map<String, String> labels) {

  public static final String RECOMMENDATION = "recommendation";
  public static final String SHADOW_ALERT = "shadow_alert";

  public Action {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(action, "action");
    labels = labels == null ? Map.of() : Map.copyOf(labels);
  }
}
