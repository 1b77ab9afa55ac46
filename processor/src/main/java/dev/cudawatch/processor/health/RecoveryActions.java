package dev.cudawatch.processor.health;

import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.diagnosis.taxonomy.Taxonomy;
import dev.cudawatch.diagnosis.taxonomy.XidInfo;
import java.util.Locale;

/**
 * The recovery the driver asks for after a GPU failure, from the taxonomy's Xid catalog (each Xid's
 * resolution bucket) and, for Xid 154, from the action its message names.
 */
final class RecoveryActions {
  static final String RESET = "reset_gpu";
  static final String REBOOT = "reboot_node";
  static final String DRAIN_RESET = "drain_and_reset";

  private static final Taxonomy TAXONOMY = Taxonomy.builtIn();

  private RecoveryActions() {}

  static Integer xid(Incident i) {
    return i.fields().get("xid") instanceof Number n ? n.intValue() : null;
  }

  /** reset_gpu, reboot_node, drain_and_reset, or null when no reset or reboot is asked for. */
  static String of(Incident i) {
    switch (i.incidentClass()) {
      case "gpu_lost":
        return REBOOT;
      case "ecc_error":
        return RESET;
      case "gpu_xid":
        break;
      default:
        return null;
    }
    Integer code = xid(i);
    if (code == null) {
      return null;
    }
    XidInfo x = TAXONOMY.xid(code).orElse(null);
    if (x == null) {
      return null;
    }
    switch (x.recovery()) {
      case "RESET_GPU":
      case "WORKFLOW_XID_48":
        return RESET;
      case "RESTART_BM":
      case "RESTART_VM":
        return REBOOT;
      case "XID_154":
        return fromMessage(String.join("\n", i.excerpt()));
      default:
        return null;
    }
  }

  /** Xid 154: "GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)". */
  static String fromMessage(String text) {
    String t = text.toLowerCase(Locale.ROOT);
    int to = t.lastIndexOf(" to 0x");
    String target = to < 0 ? t : t.substring(to);
    if (target.contains("reboot")) {
      return REBOOT;
    }
    if (target.contains("drain and reset")) {
      return DRAIN_RESET;
    }
    if (target.contains("reset")) {
      return RESET;
    }
    return null; // none, drain P2P: no reset or reboot
  }
}
