package dev.cudawatch.diagnosis.catalog;

import com.google.re2j.Matcher;
import com.google.re2j.Pattern;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A compiled signature: RE2/J patterns (linear time, so a user's pattern cannot hang the pipeline)
 * and what an incident of it says.
 */
public final class Signature {
  /** Class placeholder: resolve the class from the CUDA error named in the fields. */
  public static final String FROM_CUDA_ERROR = "from_cuda_error";

  /** The class of the library status the match names (library-statuses.yaml). */
  public static final String FROM_LIBRARY_STATUS = "from_library_status";

  /** Class placeholder: take the class of the stream's root failure. */
  public static final String FROM_ROOT = "from_root";

  private final SignatureSpec spec;
  private final Role role;
  private final List<Pattern> match;
  private final List<Pattern> extract;
  private final List<Pattern> exclude;
  private final Set<String> attachTo;

  Signature(
      SignatureSpec spec,
      Role role,
      List<Pattern> match,
      List<Pattern> extract,
      List<Pattern> exclude) {
    this.spec = spec;
    this.role = role;
    this.match = List.copyOf(match);
    this.extract = List.copyOf(extract);
    this.exclude = List.copyOf(exclude);
    this.attachTo = Set.copyOf(spec.attachTo());
  }

  /**
   * Tries the signature on one normalised line.
   *
   * @return the raw fields (group name to text) when it matches, else null
   */
  public Map<String, String> match(String line) {
    Map<String, String> fields = null;
    for (Pattern p : match) {
      Matcher m = p.matcher(line);
      if (m.find()) {
        fields = new LinkedHashMap<>();
        putGroups(p, m, fields);
        break;
      }
    }
    if (fields == null) {
      return null;
    }
    for (Pattern p : exclude) {
      if (p.matcher(line).find()) {
        return null;
      }
    }
    extractInto(line, fields);
    return fields;
  }

  /** Adds the groups of every extract pattern that matches, keeping values already there. */
  public void extractInto(String line, Map<String, String> fields) {
    for (Pattern p : extract) {
      Matcher m = p.matcher(line);
      if (m.find()) {
        putGroups(p, m, fields);
      }
    }
  }

  private static void putGroups(Pattern p, Matcher m, Map<String, String> fields) {
    for (Map.Entry<String, Integer> g : p.namedGroups().entrySet()) {
      String v = m.group(g.getValue());
      if (v != null && !v.isBlank()) {
        fields.putIfAbsent(g.getKey(), v.strip());
      }
    }
  }

  /** The match patterns, compiled. */
  List<Pattern> matchPatternList() {
    return match;
  }

  /** The exclude patterns, compiled. */
  List<Pattern> excludePatternList() {
    return exclude;
  }

  /** Whether extract patterns add fields to a match. */
  boolean extracts() {
    return !extract.isEmpty();
  }

  /** The match patterns as compiled (macros expanded): for comparisons with other tools. */
  public List<String> matchPatterns() {
    return match.stream().map(Pattern::pattern).toList();
  }

  public String id() {
    return spec.id();
  }

  public String incidentClass() {
    return spec.incidentClass();
  }

  public Role role() {
    return role;
  }

  public Set<String> attachTo() {
    return attachTo;
  }

  public String severity() {
    return spec.severity();
  }

  public String suspect() {
    return spec.suspect();
  }

  public String framework() {
    return spec.framework();
  }

  public List<String> keywords() {
    return spec.keywords();
  }

  public List<String> mergeOn() {
    return spec.mergeOn();
  }

  public String summary() {
    return spec.summary();
  }

  public String explanation() {
    return spec.explanation();
  }

  public List<String> nextSteps() {
    return spec.nextSteps();
  }

  @Override
  public String toString() {
    return "Signature[" + spec.id() + "]";
  }
}
