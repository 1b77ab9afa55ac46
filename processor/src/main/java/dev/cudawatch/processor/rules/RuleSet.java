package dev.cudawatch.processor.rules;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.cudawatch.common.config.ConfigException;
import dev.cudawatch.diagnosis.taxonomy.IncidentClass;
import dev.cudawatch.diagnosis.taxonomy.Taxonomy;
import java.io.IOException;
import java.io.InputStream;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** The detection rules: shipped defaults, then the site's files (same name replaces). */
public final class RuleSet implements Serializable {
  private static final long serialVersionUID = 1L;
  private static final Set<String> TYPES = Set.of(RuleSpec.COUNT, RuleSpec.SPIKE, RuleSpec.SILENCE);
  private static final Set<String> SILENCE_KEYS = Set.of("host", "job");
  private static final Set<String> KEYS =
      Set.of("host", "job", "gpu", "pci", "rank", "class", "user_frame", "source");
  private static final ObjectMapper YAML =
      YAMLMapper.builder(new YAMLFactory())
          .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
          .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
          .build();

  private final List<RuleSpec> rules;

  private RuleSet(List<RuleSpec> rules) {
    this.rules = List.copyOf(rules);
  }

  /** In a rule's classes: every class the lemon-GPU score counts (taxonomy.yaml's lemon_gpu). */
  public static final String LEMON_GPU = "@lemon_gpu";

  /** The shipped rules plus the given files' (name, YAML bytes). */
  public static RuleSet load(Map<String, byte[]> siteFiles) {
    Map<String, RuleSpec> byName = new LinkedHashMap<>();
    try (InputStream in = RuleSet.class.getResourceAsStream("/cudawatch/rules.yaml")) {
      read("builtin:rules.yaml", in.readAllBytes(), byName);
    } catch (IOException e) {
      throw new ConfigException("builtin rules: " + e.getMessage(), e);
    }
    siteFiles.forEach((name, bytes) -> read(name, bytes, byName));
    return new RuleSet(new ArrayList<>(byName.values()));
  }

  private static void read(String origin, byte[] yaml, Map<String, RuleSpec> into) {
    try {
      JsonNode root = YAML.readTree(yaml);
      for (var it = root.fieldNames(); it.hasNext(); ) {
        String k = it.next();
        if (!k.equals("version") && !k.equals("rules")) {
          throw new ConfigException(origin + ": unknown key '" + k + "' (known: version, rules)");
        }
      }
      for (JsonNode n : root.path("rules")) {
        RuleSpec r = withTaxonomyClasses(origin, YAML.treeToValue(n, RuleSpec.class));
        validate(origin, r);
        into.put(r.name(), r);
      }
    } catch (IOException e) {
      throw new ConfigException(origin + ": " + e.getMessage().lines().findFirst().orElse(""), e);
    }
  }

  /**
   * Expands {@code @lemon_gpu} to the classes taxonomy.yaml marks {@code lemon_gpu: true}, and
   * rejects a class the taxonomy does not know (a rule that could never fire).
   */
  private static RuleSpec withTaxonomyClasses(String origin, RuleSpec r) {
    Taxonomy taxonomy = Taxonomy.builtIn();
    List<String> classes = new ArrayList<>();
    for (String c : r.classes()) {
      if (c.equals(LEMON_GPU)) {
        taxonomy.classes().stream()
            .filter(IncidentClass::lemonGpu)
            .forEach(k -> classes.add(k.id()));
      } else if (taxonomy.contains(c)) {
        classes.add(c);
      } else {
        throw new ConfigException(
            origin
                + ": rule '"
                + r.name()
                + "': unknown class '"
                + c
                + "' (classes are those of taxonomy.yaml, or "
                + LEMON_GPU
                + ")");
      }
    }
    return new RuleSpec(
        r.name(),
        r.type(),
        classes,
        r.key(),
        r.windowSeconds(),
        r.threshold(),
        r.distinct(),
        r.severity(),
        r.baselineSeconds(),
        r.factor(),
        r.forSeconds(),
        r.summary(),
        r.description(),
        r.require());
  }

  private static void validate(String origin, RuleSpec r) {
    String where = origin + ": rule '" + r.name() + "': ";
    if (r.name() == null || r.name().isBlank()) {
      throw new ConfigException(origin + ": a rule needs a name");
    }
    if (!TYPES.contains(r.type())) {
      throw new ConfigException(where + "unknown type '" + r.type() + "' (use " + TYPES + ")");
    }
    if (r.classes().isEmpty()) {
      throw new ConfigException(where + "needs classes");
    }
    for (String k : r.key()) {
      if (!KEYS.contains(k)) {
        throw new ConfigException(where + "unknown key field '" + k + "' (use " + KEYS + ")");
      }
    }
    if (!r.key().containsAll(r.require())) {
      throw new ConfigException(where + "require names fields that are not in its key");
    }
    if (r.distinct() != null && !KEYS.contains(r.distinct())) {
      throw new ConfigException(
          where + "unknown distinct field '" + r.distinct() + "' (use " + KEYS + ")");
    }
    switch (r.type()) {
      case RuleSpec.COUNT -> requireWindowAndThreshold(where, r);
      case RuleSpec.SPIKE -> {
        requireWindowAndThreshold(where, r);
        if (r.baselineSeconds() == null || r.baselineSeconds() < 2 * r.windowSeconds()) {
          throw new ConfigException(where + "needs baseline_seconds >= 2 * window_seconds");
        }
        if (r.baselineSeconds() > 7 * 86_400L) {
          throw new ConfigException(where + "baseline_seconds is at most 7 days");
        }
        if (r.factor() == null || !(r.factor() > 1.0)) {
          throw new ConfigException(where + "needs factor > 1");
        }
      }
      case RuleSpec.SILENCE -> {
        if (r.forSeconds() == null || r.forSeconds() < 1) {
          throw new ConfigException(where + "needs for_seconds >= 1");
        }
        if (!r.key().contains("job") || !SILENCE_KEYS.containsAll(r.key())) {
          throw new ConfigException(
              where + "key must name job and may add host (a job's output is what goes silent)");
        }
        if (r.distinct() != null || r.threshold() != null) {
          throw new ConfigException(where + "a silence rule takes no distinct or threshold");
        }
      }
      default -> throw new IllegalStateException(r.type());
    }
    if (!RuleSpec.SPIKE.equals(r.type()) && (r.baselineSeconds() != null || r.factor() != null)) {
      throw new ConfigException(where + "baseline_seconds and factor belong to spike rules");
    }
    if (!RuleSpec.SILENCE.equals(r.type()) && r.forSeconds() != null) {
      throw new ConfigException(where + "for_seconds belongs to silence rules");
    }
  }

  private static void requireWindowAndThreshold(String where, RuleSpec r) {
    if (r.windowSeconds() == null
        || r.windowSeconds() < 1
        || r.threshold() == null
        || r.threshold() < 1
        || r.threshold() > 10_000) {
      throw new ConfigException(where + "needs window_seconds >= 1 and threshold 1..10000");
    }
  }

  /** The rules of one type. */
  public List<RuleSpec> ofType(String type) {
    return rules.stream().filter(r -> r.type().equals(type)).toList();
  }

  public List<RuleSpec> rules() {
    return rules;
  }
}
