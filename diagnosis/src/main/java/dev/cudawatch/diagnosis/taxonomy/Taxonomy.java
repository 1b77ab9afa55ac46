package dev.cudawatch.diagnosis.taxonomy;

import com.fasterxml.jackson.core.JsonToken;
import dev.cudawatch.diagnosis.datafile.CatalogException;
import dev.cudawatch.diagnosis.datafile.StrictYaml;
import dev.cudawatch.diagnosis.datafile.StrictYaml.Located;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * The incident taxonomy: every class with its defaults and advice, and NVIDIA's Xid catalog with a
 * verdict per code. One data file (taxonomy.yaml) that the classifier, the advice, the Xid
 * correlation, the lemon-GPU score and the docs all read; loaded once and checked strictly.
 */
public final class Taxonomy {
  public static final String RESOURCE = "/cudawatch/taxonomy.yaml";
  public static final Set<String> SEVERITIES = Set.of("critical", "error", "warning", "info");

  /** A class's gpu_recovery: the Xid's recovery bucket decides (recovery_requests). */
  public static final String BY_XID = "xid";

  /** A recovery request: the Xid's message names the action (Xid 154). */
  public static final String NAMED_IN_MESSAGE = "named_in_message";

  private static final Set<String> REQUESTS = Set.of("reset_gpu", "reboot_node");
  public static final Set<String> SUSPECTS =
      Set.of("application", "hardware", "environment", "infrastructure", "framework", "driver");

  private final Map<String, IncidentClass> classes;
  private final Map<String, String> origins;
  private final Map<Integer, XidInfo> xids;
  private final Map<String, String> recoveryActions;
  private final Map<String, String> recoveryRequests;
  private final List<String> commonFields;
  private final String kernelLineQuoted;

  private Taxonomy(
      Map<String, IncidentClass> classes,
      Map<String, String> origins,
      Map<Integer, XidInfo> xids,
      Map<String, String> recoveryActions,
      Map<String, String> recoveryRequests,
      List<String> commonFields) {
    this.commonFields = commonFields;
    this.classes = classes;
    this.kernelLineQuoted =
        classes.values().stream()
            .filter(IncidentClass::kernelLineQuoted)
            .map(IncidentClass::id)
            .findFirst()
            .orElse(null);
    this.origins = origins;
    this.xids = xids;
    this.recoveryActions = recoveryActions;
    this.recoveryRequests = recoveryRequests;
  }

  private static final class Holder {
    static final Taxonomy BUILT_IN = loadResource();
  }

  /** The built-in taxonomy, loaded and checked once per JVM. */
  public static Taxonomy builtIn() {
    return Holder.BUILT_IN;
  }

  private static Taxonomy loadResource() {
    try (InputStream in = Taxonomy.class.getResourceAsStream(RESOURCE)) {
      if (in == null) {
        throw new CatalogException("builtin resource " + RESOURCE + " is missing from the jar");
      }
      return load(in, "builtin:taxonomy.yaml");
    } catch (IOException e) {
      throw new CatalogException("builtin:taxonomy.yaml: " + e.getMessage(), e);
    }
  }

  /** Reads and checks a taxonomy; a bad entry fails with its {@code file:line} and reason. */
  public static Taxonomy load(InputStream in, String file) {
    List<Located<IncidentClass>> cls = new ArrayList<>();
    List<Located<XidInfo>> xs = new ArrayList<>();
    Map<String, String> recovery = new LinkedHashMap<>();
    Map<String, String> requests = new LinkedHashMap<>();
    List<String> common = new ArrayList<>();
    Map<String, StrictYaml.Section> sections = new LinkedHashMap<>();
    sections.put(
        "version",
        (p, t) -> {
          if (p.getValueAsInt(-1) != 1) {
            throw new CatalogException(
                StrictYaml.at(file, p.currentLocation())
                    + "unsupported taxonomy version '"
                    + p.getText()
                    + "' (this build reads 1)");
          }
        });
    sections.put(
        "common_fields",
        (p, t) -> {
          for (Object o : StrictYaml.readValue(p, file, List.class)) {
            common.add(String.valueOf(o));
          }
        });
    sections.put(
        "classes", (p, t) -> StrictYaml.readList(p, t, file, "classes", IncidentClass.class, cls));
    sections.put(
        "recovery_actions",
        (p, t) -> {
          if (t != JsonToken.START_OBJECT) {
            throw new CatalogException(
                StrictYaml.at(file, p.currentLocation()) + "'recovery_actions' must be a mapping");
          }
          @SuppressWarnings("unchecked")
          Map<String, String> m = StrictYaml.readValue(p, file, Map.class);
          recovery.putAll(m);
        });
    sections.put(
        "recovery_requests",
        (p, t) -> {
          if (t != JsonToken.START_OBJECT) {
            throw new CatalogException(
                StrictYaml.at(file, p.currentLocation()) + "'recovery_requests' must be a mapping");
          }
          @SuppressWarnings("unchecked")
          Map<String, String> m = StrictYaml.readValue(p, file, Map.class);
          requests.putAll(m);
        });
    sections.put("xids", (p, t) -> StrictYaml.readList(p, t, file, "xids", XidInfo.class, xs));
    StrictYaml.read(in, file, sections);

    Map<String, IncidentClass> byId = new LinkedHashMap<>();
    Map<String, String> origins = new LinkedHashMap<>();
    int xidClasses = 0;
    int quotedClasses = 0;
    for (Located<IncidentClass> l : cls) {
      IncidentClass c = l.value();
      String where = l.origin() + ": class '" + c.id() + "': ";
      require(
          c.id() != null && c.id().matches("[a-z][a-z0-9_]*"), where, "needs an id in snake_case");
      require(byId.put(c.id(), c) == null, where, "is defined twice");
      origins.put(c.id(), l.origin());
      require(c.title() != null && !c.title().isBlank(), where, "needs a title");
      require(
          SEVERITIES.contains(c.severity()),
          where,
          "severity must be one of " + new java.util.TreeSet<>(SEVERITIES));
      require(
          SUSPECTS.contains(c.suspect()),
          where,
          "suspect must be one of " + new java.util.TreeSet<>(SUSPECTS));
      require(
          c.advice() != null || (c.explanation() != null && !c.nextSteps().isEmpty()),
          where,
          "has no advice: give explanation and next_steps, or advice: oom|nccl|assert|xid");
      if (c.xidCorrelation() == XidRole.XID) {
        xidClasses++;
      }
      if (c.kernelLineQuoted()) {
        quotedClasses++;
      }
      require(
          !c.kernelLineQuoted()
              || !c.kernelLog() && !c.lemonGpu() && c.xidCorrelation() == XidRole.NONE,
          where,
          "a quoted kernel line speaks for no GPU (no kernel_log, lemon_gpu or xid_correlation)");
      require(
          c.xidCorrelation() != XidRole.XID || c.kernelLog(),
          where,
          "the Xid events come from the kernel log (kernel_log: true)");
      require(
          c.jobRole() != JobRole.CONSEQUENCE || c.detector() == null,
          where,
          "a detector's warning is no rank's report of another's failure (job_role: consequence)");
      require(
          c.advice() != AdviceLogic.XID || c.xidCorrelation() == XidRole.XID,
          where,
          "advice: xid belongs to the class of Xid events (xid_correlation: xid)");
      require(
          c.gpuRecovery() == null
              || REQUESTS.contains(c.gpuRecovery())
              || BY_XID.equals(c.gpuRecovery()) && c.xidCorrelation() == XidRole.XID,
          where,
          "gpu_recovery must be reset_gpu, reboot_node, or xid (for the class of Xid events)");
      require(
          c.alert() == null || c.alert().matches("[A-Z][A-Za-z0-9]*"),
          where,
          "alert must be an alert name in CamelCase");
    }
    if (xidClasses != 1) {
      throw new CatalogException(
          file + ": exactly one class must have xid_correlation: xid, found " + xidClasses);
    }
    if (quotedClasses > 1) {
      throw new CatalogException(
          file + ": at most one class may have kernel_line_quoted: true, found " + quotedClasses);
    }
    Map<Integer, XidInfo> byCode = new TreeMap<>();
    for (Located<XidInfo> l : xs) {
      XidInfo x = l.value();
      String where = l.origin() + ": Xid " + x.xid() + ": ";
      require(x.xid() > 0, where, "needs a positive xid");
      require(byCode.put(x.xid(), x) == null, where, "is listed twice");
      require(
          x.verdict() != null,
          where,
          "needs a verdict (application, hardware, driver, informational)");
      require(
          SEVERITIES.contains(x.severity()),
          where,
          "severity must be one of critical, error, warning, info");
      require(x.meaning() != null && !x.meaning().isBlank(), where, "needs a meaning");
      require(
          recovery.containsKey(x.recovery()),
          where,
          "unknown recovery '" + x.recovery() + "' (known: " + recovery.keySet() + ")");
    }
    for (Map.Entry<String, String> e : requests.entrySet()) {
      String where = file + ": recovery_requests: " + e.getKey() + ": ";
      require(recovery.containsKey(e.getKey()), where, "is not a recovery of recovery_actions");
      require(
          REQUESTS.contains(e.getValue()) || NAMED_IN_MESSAGE.equals(e.getValue()),
          where,
          "must be reset_gpu, reboot_node or named_in_message");
    }
    return new Taxonomy(
        java.util.Collections.unmodifiableMap(byId),
        origins,
        java.util.Collections.unmodifiableMap(byCode),
        java.util.Collections.unmodifiableMap(recovery),
        java.util.Collections.unmodifiableMap(requests),
        List.copyOf(common));
  }

  private static void require(boolean ok, String where, String message) {
    if (!ok) {
      throw new CatalogException(where + message);
    }
  }

  /**
   * Checks that every class is produced by something: a signature, a CUDA error's class, or a
   * detector it names.
   */
  public void requireProduced(Set<String> produced) {
    for (IncidentClass c : classes.values()) {
      if (c.detector() == null && !produced.contains(c.id())) {
        throw new CatalogException(
            origins.get(c.id())
                + ": class '"
                + c.id()
                + "': no signature or CUDA error produces it (add one, or name its detector)");
      }
    }
  }

  public boolean contains(String id) {
    return classes.containsKey(id);
  }

  /** The class, which must exist. */
  public IncidentClass get(String id) {
    IncidentClass c = classes.get(id);
    if (c == null) {
      throw new IllegalArgumentException("not a taxonomy class: " + id);
    }
    return c;
  }

  public Optional<IncidentClass> find(String id) {
    return Optional.ofNullable(classes.get(id));
  }

  /** Every class, in the file's order. */
  public Collection<IncidentClass> classes() {
    return classes.values();
  }

  public Set<String> ids() {
    return classes.keySet();
  }

  /** Classes the lemon-GPU score counts. */
  public Set<String> lemonClasses() {
    Set<String> out = new LinkedHashSet<>();
    classes.values().stream().filter(IncidentClass::lemonGpu).forEach(c -> out.add(c.id()));
    return Set.copyOf(out);
  }

  /** Classes with this part in the Xid correlation. */
  public Set<String> classesWith(XidRole role) {
    Set<String> out = new LinkedHashSet<>();
    classes.values().stream().filter(c -> c.xidCorrelation() == role).forEach(c -> out.add(c.id()));
    return Set.copyOf(out);
  }

  /** Classes that are a consequence of another rank's failure in a job (job_role: consequence). */
  public Set<String> consequenceClasses() {
    Set<String> out = new LinkedHashSet<>();
    classes.values().stream()
        .filter(c -> c.jobRole() == JobRole.CONSEQUENCE)
        .forEach(c -> out.add(c.id()));
    return Set.copyOf(out);
  }

  /** Classes whose incidents come from a node's kernel log (kernel_log: true). */
  public Set<String> kernelLogClasses() {
    Set<String> out = new LinkedHashSet<>();
    classes.values().stream().filter(IncidentClass::kernelLog).forEach(c -> out.add(c.id()));
    return Set.copyOf(out);
  }

  /**
   * The class a kernel-log class becomes when its line did not come from a kernel source (a job's
   * output quoting dmesg): only the kernel speaks for the hardware. Null when the taxonomy has
   * none: such a line then makes no incident.
   */
  public String kernelLineQuoted() {
    return kernelLineQuoted;
  }

  public Optional<XidInfo> xid(int code) {
    return Optional.ofNullable(xids.get(code));
  }

  /** Every Xid of the catalog, by code. */
  public Collection<XidInfo> xids() {
    return xids.values();
  }

  /** What to do for an Xid: its own action, or its recovery bucket's text. */
  public String action(XidInfo x) {
    return x.action() != null ? x.action() : recoveryActions.get(x.recovery());
  }

  /** Fields any incident may carry (where it ran, which framework, which rank and GPU). */
  public List<String> commonFields() {
    return commonFields;
  }

  public Map<String, String> recoveryActions() {
    return recoveryActions;
  }

  /**
   * What a recovery bucket asks of the GPU: reset_gpu, reboot_node, {@link #NAMED_IN_MESSAGE}, or
   * null for neither.
   */
  public String recoveryRequest(String recovery) {
    return recoveryRequests.get(recovery);
  }

  /** Classes the detector produces. */
  public Set<String> classesOf(String detector) {
    Set<String> out = new LinkedHashSet<>();
    classes.values().stream()
        .filter(c -> detector.equals(c.detector()))
        .forEach(c -> out.add(c.id()));
    return Set.copyOf(out);
  }
}
