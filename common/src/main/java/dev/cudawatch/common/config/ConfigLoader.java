package dev.cudawatch.common.config;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.deser.DeserializationProblemHandler;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * Loads a typed configuration from one YAML file plus environment overrides.
 *
 * <p>Precedence: defaults in the config classes, then the file, then the environment. An
 * environment variable {@code PREFIX_A__B_C=value} sets key {@code b_c} of section {@code a}
 * ({@code __} separates levels, so keys may contain single underscores). Unknown keys, from the
 * file or the environment, are errors that name the key.
 */
public final class ConfigLoader {
  private static final ObjectMapper YAML =
      YAMLMapper.builder(new YAMLFactory())
          .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
          .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
          .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
          .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
          .findAndAddModules()
          .build();

  private final String envPrefix;
  private final Map<String, String> env;

  /**
   * @param envPrefix e.g. {@code CUDAWATCH}; variables named {@code CUDAWATCH_...} override keys
   * @param env the environment (injected so tests need not touch the process environment)
   */
  public ConfigLoader(String envPrefix, Map<String, String> env) {
    this.envPrefix = envPrefix.endsWith("_") ? envPrefix : envPrefix + "_";
    this.env = env;
  }

  /**
   * Loads {@code type} from {@code file} (null for defaults only) and the environment. Every error
   * is a {@link ConfigException} whose message reads {@code file:line: key: reason} (or {@code
   * environment variable NAME: key: reason}).
   */
  public <T> T load(Path file, Class<T> type) {
    String origin = file == null ? "defaults" : file.toString();
    byte[] text = read(file);
    ObjectNode tree = readTree(origin, text);
    Map<String, String> fromEnv = applyEnv(tree);
    T config;
    try {
      config = YAML.treeToValue(tree, type);
    } catch (UnrecognizedPropertyException e) {
      String key = dotted(e.getPath());
      String known =
          e.getKnownPropertyIds().stream()
              .map(Object::toString)
              .sorted()
              .collect(Collectors.joining(", "));
      throw located(origin, text, fromEnv, key, "unknown key (known keys here: " + known + ")");
    } catch (MismatchedInputException e) {
      String key = dotted(e.getPath());
      throw located(origin, text, fromEnv, key, "bad value: " + firstLine(e.getOriginalMessage()));
    } catch (IOException | IllegalArgumentException e) {
      throw new ConfigException(origin + ": " + firstLine(e.getMessage()), e);
    }
    if (config == null) {
      throw new ConfigException(origin + ": empty configuration");
    }
    if (config instanceof Validated v) {
      try {
        v.validate("");
      } catch (ConfigException e) {
        if (e.key() == null) {
          throw new ConfigException(origin + ": " + e.getMessage(), e);
        }
        String reason = e.getMessage().substring(e.key().length() + 2);
        ConfigException out = located(origin, text, fromEnv, e.key(), reason);
        out.initCause(e);
        throw out;
      }
    }
    return config;
  }

  /**
   * Checks an already loaded configuration again (after command-line overrides), with the same
   * {@code file:line: key: reason} messages.
   */
  public void validate(Path file, Validated config) {
    try {
      config.validate("");
    } catch (ConfigException e) {
      if (e.key() == null) {
        throw e;
      }
      String origin = file == null ? "defaults" : file.toString();
      String reason = e.getMessage().substring(e.key().length() + 2);
      throw located(origin, read(file), Map.of(), e.key(), reason);
    }
  }

  /**
   * Every problem of {@code file} as {@code type}, one {@code file:line: key: reason} line each,
   * without the environment (for {@code cudawatch check}): all unknown keys, then the first bad
   * value or failed check; empty when the file is fine.
   */
  public static List<String> problems(Path file, Class<?> type) {
    String origin = file.toString();
    List<String> problems = new ArrayList<>();
    byte[] text;
    ObjectNode tree;
    try {
      text = read(file);
      tree = readTree(origin, text);
    } catch (ConfigException e) {
      return List.of(e.getMessage());
    }
    ObjectMapper collecting =
        YAML.copy()
            .addHandler(
                new DeserializationProblemHandler() {
                  @Override
                  public boolean handleUnknownProperty(
                      DeserializationContext ctxt,
                      JsonParser p,
                      JsonDeserializer<?> deserializer,
                      Object bean,
                      String name)
                      throws IOException {
                    String key = path(p.getParsingContext(), name);
                    problems.add(located(origin, text, Map.of(), key, "unknown key").getMessage());
                    p.skipChildren();
                    return true;
                  }
                });
    try {
      Object config = collecting.treeToValue(tree, type);
      if (config instanceof Validated v) {
        new ConfigLoader("", Map.of()).validate(file, v);
      }
    } catch (ConfigException e) {
      problems.add(e.getMessage());
    } catch (MismatchedInputException e) {
      problems.add(
          located(
                  origin,
                  text,
                  Map.of(),
                  dotted(e.getPath()),
                  "bad value: " + firstLine(e.getOriginalMessage()))
              .getMessage());
    } catch (IOException | IllegalArgumentException e) {
      problems.add(origin + ": " + firstLine(e.getMessage()));
    }
    // in the file's order, as a person reads it (binding visits keys in the record's order)
    problems.sort(java.util.Comparator.comparingInt(p -> lineIn(p, origin)));
    return problems;
  }

  private static int lineIn(String problem, String origin) {
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("^" + java.util.regex.Pattern.quote(origin) + ":(\\d+):")
            .matcher(problem);
    return m.find() ? Integer.parseInt(m.group(1)) : Integer.MAX_VALUE;
  }

  /** The dotted key of a field {@code name} read in parser context {@code ctx}. */
  private static String path(JsonStreamContext ctx, String name) {
    java.util.Deque<String> parts = new java.util.ArrayDeque<>();
    for (JsonStreamContext c = ctx; c != null && !c.inRoot(); c = c.getParent()) {
      if (c.inObject() && c.getCurrentName() != null) {
        parts.addFirst("." + c.getCurrentName());
      } else if (c.inArray() && c.getCurrentIndex() >= 0) {
        parts.addFirst("[" + c.getCurrentIndex() + "]");
      }
    }
    String joined = String.join("", parts);
    if (!joined.endsWith("." + name)) {
      joined = joined + "." + name;
    }
    return joined.startsWith(".") ? joined.substring(1) : joined;
  }

  private static ConfigException located(
      String origin, byte[] text, Map<String, String> fromEnv, String key, String reason) {
    String envVar = fromEnv.get(key);
    if (envVar != null) {
      return ConfigException.atKey("environment variable " + envVar + ": " + key, reason);
    }
    int line = YamlLines.lineOf(text, key);
    String where = line > 0 ? origin + ":" + line : origin;
    return new ConfigException(where + ": " + key + ": " + reason);
  }

  private static byte[] read(Path file) {
    if (file == null) {
      return null;
    }
    if (!Files.isRegularFile(file) || !Files.isReadable(file)) {
      throw new ConfigException(file + ": cannot read the configuration file");
    }
    try {
      return Files.readAllBytes(file);
    } catch (IOException e) {
      throw new ConfigException(file + ": cannot read the configuration file: " + e.getMessage());
    }
  }

  private static ObjectNode readTree(String origin, byte[] text) {
    if (text == null) {
      return JsonNodeFactory.instance.objectNode();
    }
    try {
      JsonNode node = YAML.readTree(text);
      if (node == null || node.isMissingNode() || node.isNull()) {
        return JsonNodeFactory.instance.objectNode();
      }
      if (!node.isObject()) {
        throw new ConfigException(origin + ":1: the top level must be a mapping of keys");
      }
      return (ObjectNode) node;
    } catch (JsonProcessingException e) {
      String where = e.getLocation() != null ? origin + ":" + e.getLocation().getLineNr() : origin;
      throw new ConfigException(
          where + ": not valid YAML: " + firstLine(e.getOriginalMessage()), e);
    } catch (IOException e) {
      throw new ConfigException(origin + ": not valid YAML: " + firstLine(e.getMessage()), e);
    }
  }

  /** Applies overrides in name order; returns dotted key to the variable that set it. */
  private Map<String, String> applyEnv(ObjectNode tree) {
    Map<String, String> applied = new TreeMap<>();
    new TreeMap<>(env)
        .forEach(
            (name, value) -> {
              if (!name.startsWith(envPrefix) || name.length() == envPrefix.length()) {
                return;
              }
              String[] path =
                  name.substring(envPrefix.length()).toLowerCase(Locale.ROOT).split("__");
              ObjectNode node = tree;
              for (int i = 0; i < path.length - 1; i++) {
                JsonNode child = node.get(path[i]);
                if (!(child instanceof ObjectNode)) {
                  child = node.putObject(path[i]);
                }
                node = (ObjectNode) child;
              }
              node.put(path[path.length - 1], value);
              applied.put(String.join(".", path), name);
            });
    return applied;
  }

  private static String dotted(
      java.util.List<com.fasterxml.jackson.databind.JsonMappingException.Reference> path) {
    StringBuilder sb = new StringBuilder();
    for (var ref : path) {
      if (ref.getFieldName() != null) {
        if (sb.length() > 0) {
          sb.append('.');
        }
        sb.append(ref.getFieldName());
      } else if (ref.getIndex() >= 0) {
        sb.append('[').append(ref.getIndex()).append(']');
      }
    }
    return sb.toString();
  }

  private static String firstLine(String s) {
    if (s == null) {
      return "";
    }
    int nl = s.indexOf('\n');
    return nl < 0 ? s : s.substring(0, nl);
  }
}
