package dev.cudawatch.processor.functions;

import dev.cudawatch.diagnosis.taxonomy.Taxonomy;
import dev.cudawatch.diagnosis.taxonomy.XidInfo;
import dev.cudawatch.diagnosis.taxonomy.XidRole;
import dev.cudawatch.diagnosis.taxonomy.XidVerdict;
import java.util.Set;

/**
 * The verdict the Xids beside an incident give it, from each Xid's verdict in taxonomy.yaml: the
 * hardware beats the driver, which beats the application; informational and unknown Xids give none.
 */
public final class XidVerdicts {
  public static final String APPLICATION_FAULT = "application_fault";
  public static final String HARDWARE_SUSPECT = "hardware_suspect";
  public static final String DRIVER_SUSPECT = "driver_suspect";

  private static final Taxonomy TAXONOMY = Taxonomy.builtIn();
  private static final String XID_CLASS = TAXONOMY.classesWith(XidRole.XID).iterator().next();
  private static final Set<String> GETS_VERDICT = TAXONOMY.classesWith(XidRole.GETS_VERDICT);

  private XidVerdicts() {}

  /** The class of the kernel log's Xid events. */
  public static String xidClass() {
    return XID_CLASS;
  }

  /** Whether incidents of this class take a verdict from the Xids beside them. */
  public static boolean getsVerdict(String incidentClass) {
    return GETS_VERDICT.contains(incidentClass);
  }

  /** The verdict these Xids give, or null. */
  public static String verdict(Iterable<Integer> xids) {
    XidVerdict strongest = null;
    for (int x : xids) {
      XidVerdict v = TAXONOMY.xid(x).map(XidInfo::verdict).orElse(XidVerdict.INFORMATIONAL);
      if (v != XidVerdict.INFORMATIONAL && (strongest == null || rank(v) > rank(strongest))) {
        strongest = v;
      }
    }
    if (strongest == null) {
      return null;
    }
    return switch (strongest) {
      case HARDWARE -> HARDWARE_SUSPECT;
      case DRIVER -> DRIVER_SUSPECT;
      case APPLICATION -> APPLICATION_FAULT;
      case INFORMATIONAL -> null;
    };
  }

  private static int rank(XidVerdict v) {
    return switch (v) {
      case HARDWARE -> 3;
      case DRIVER -> 2;
      case APPLICATION -> 1;
      case INFORMATIONAL -> 0;
    };
  }
}
