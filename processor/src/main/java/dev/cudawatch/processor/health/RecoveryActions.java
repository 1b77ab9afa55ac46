package dev.cudawatch.processor.health;

import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.diagnosis.taxonomy.IncidentClass;
import dev.cudawatch.diagnosis.taxonomy.Taxonomy;
import dev.cudawatch.diagnosis.taxonomy.XidInfo;
import java.util.Locale;

/**
 * The recovery the driver asks for after a GPU failure, as taxonomy.yaml states it: a class's
 * {@code gpu_recovery}, or for the class of Xid events its Xid's recovery bucket (through {@code
 * recovery_requests}) and, for Xid 154, the action its message names.
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
    String recovery = TAXONOMY.find(i.incidentClass()).map(IncidentClass::gpuRecovery).orElse(null);
    if (!Taxonomy.BY_XID.equals(recovery)) {
      return recovery;
    }
    Integer code = xid(i);
    if (code == null) {
      return null;
    }
    XidInfo x = TAXONOMY.xid(code).orElse(null);
    if (x == null) {
      return null;
    }
    String request = TAXONOMY.recoveryRequest(x.recovery());
    return Taxonomy.NAMED_IN_MESSAGE.equals(request)
        ? fromMessage(String.join("\n", i.excerpt()))
        : request;
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
