package dev.cudawatch.launcher;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.cudawatch.alerts.AlertsSettings;
import dev.cudawatch.common.config.ConfigLoader;
import dev.cudawatch.ingest.AgentSettings;
import dev.cudawatch.processor.config.ProcessorSettings;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * docs/configuration.md, generated from the typed configuration records themselves: every key, its
 * type, its default (what the record's constructor fills in for a missing key) and its environment
 * variable. {@code ConfigReferenceTest} fails when the committed file differs.
 */
public final class ConfigReference {
  /** A service: its name, its environment prefix and its configuration record. */
  public record Service(String name, String prefix, Class<?> type, String note) {}

  public static final List<Service> SERVICES =
      List.of(
          new Service(
              "agent",
              "CUDAWATCH_AGENT",
              AgentSettings.class,
              "`bin/cudawatch agent --config FILE` (and `run`, which reads the same file)."),
          new Service(
              "processor",
              "CUDAWATCH_PROCESSOR",
              ProcessorSettings.class,
              "`bin/cudawatch processor --config FILE`, or `flink run ... --config FILE`."),
          new Service(
              "alerts",
              "CUDAWATCH_ALERTS",
              AlertsSettings.class,
              "`bin/cudawatch alerts --config FILE`."));

  /** Defaults that depend on the machine the generator runs on, described instead. */
  static final Map<String, String> MACHINE_DEFAULTS =
      Map.of(
          "agent.host", "this machine's host name",
          "agent.state_dir", "`~/.cudawatch/agent`",
          "agent.job", "from `SLURM_JOB_ID`, `TORCHELASTIC_RUN_ID`, ... when set");

  private static final ObjectMapper JSON =
      JsonMapper.builder()
          .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
          .findAndAddModules()
          .build();

  private ConfigReference() {}

  public static void main(String[] args) {
    System.out.print(markdown());
  }

  /** The whole document. */
  public static String markdown() {
    StringBuilder sb = new StringBuilder();
    sb.append("# Configuration reference\n\n")
        .append("<!-- generated from the configuration records by ConfigReference; do not edit:")
        .append(" regenerate with ./mvnw -pl integration-tests -am test -Dtest=ConfigReferenceTest")
        .append(" -Dsurefire.failIfNoSpecifiedTests=false -Dgolden.update=true -->\n\n")
        .append("Every service reads one YAML file (`--config FILE`); every key is optional and")
        .append(" takes the default below when absent. An environment variable overrides a key:")
        .append(" the service's prefix, then the key's path in upper case with `__` between")
        .append(" levels. An unknown key, from the file or the environment, is an error that names")
        .append(" it; `bin/cudawatch check FILE` finds every such problem before a deployment.")
        .append(" List items (`inputs`) have no environment variable of their own: set the whole")
        .append(" list in the file.\n\n")
        .append("Logging is set on the command line or in the environment, for every command:")
        .append(" `--log-level` / `CUDAWATCH_LOG_LEVEL` (error, warn, info, debug, trace; default")
        .append(
            " info for cudawatch, libraries at warn) and `--log-format` / `CUDAWATCH_LOG_FORMAT`")
        .append(" (text, or json: one ECS JSON object per line on stderr, for log shippers).\n");
    for (Service s : SERVICES) {
      Object defaults = new ConfigLoader(s.prefix(), Map.of()).load(null, s.type());
      JsonNode values = JSON.valueToTree(defaults);
      sb.append("\n## ").append(s.name()).append("\n\n").append(s.note()).append("\n\n");
      sb.append("| key | type | default | environment variable |\n|---|---|---|---|\n");
      rows(sb, s, s.type(), values, "", s.prefix() + "_", true);
    }
    return sb.toString();
  }

  private static void rows(
      StringBuilder sb,
      Service s,
      Class<?> type,
      JsonNode values,
      String path,
      String env,
      boolean envAllowed) {
    for (RecordComponent c : type.getRecordComponents()) {
      String key = ConfigKeys.snake(c.getName());
      String dotted = path + key;
      String var = envAllowed ? env + key.toUpperCase(Locale.ROOT) : null;
      JsonNode value = values == null ? null : values.get(key);
      Class<?> raw = c.getType();
      Class<?> item = listItem(c.getGenericType());
      if (raw.isRecord()) {
        rows(sb, s, raw, value, dotted + ".", var + "__", envAllowed);
        continue;
      }
      if (item != null && item.isRecord()) {
        sb.append(row(dotted, "list of mappings", show(s.name() + "." + dotted, value), null));
        rows(
            sb,
            s,
            item,
            value != null && value.size() > 0 ? value.get(0) : null,
            dotted + "[].",
            null,
            false);
        continue;
      }
      String shown = path.endsWith("[].") ? "–" : show(s.name() + "." + dotted, value);
      if (item != null) {
        var = null; // a list is set in the file: the environment holds one string
      } else if (var != null && raw == Map.class) {
        var = var + "__<NAME>";
      }
      sb.append(row(dotted, typeName(c.getGenericType()), shown, var));
    }
  }

  private static String row(String key, String type, String value, String env) {
    return "| `"
        + key
        + "` | "
        + type
        + " | "
        + value
        + " | "
        + (env == null ? "–" : "`" + env + "`")
        + " |\n";
  }

  private static String show(String id, JsonNode value) {
    if (MACHINE_DEFAULTS.containsKey(id)) {
      return MACHINE_DEFAULTS.get(id);
    }
    if (value == null || value.isNull()) {
      return "none";
    }
    if (value.isContainerNode() && value.isEmpty()) {
      return value.isArray() ? "`[]`" : "`{}`";
    }
    String text = value.isTextual() ? value.asText() : value.toString();
    return "`" + text.replace("|", "\\|") + "`";
  }

  private static Class<?> listItem(Type t) {
    if (t instanceof ParameterizedType p
        && p.getRawType() == List.class
        && p.getActualTypeArguments()[0] instanceof Class<?> c) {
      return c;
    }
    return null;
  }

  private static String typeName(Type t) {
    if (t instanceof ParameterizedType p) {
      Type[] args = p.getActualTypeArguments();
      if (p.getRawType() == List.class) {
        return "list of " + typeName(args[0]);
      }
      if (p.getRawType() == Map.class) {
        return "map of " + typeName(args[0]) + " to " + typeName(args[1]);
      }
    }
    if (t instanceof Class<?> c) {
      return switch (c.getSimpleName()) {
        case "String" -> "string";
        case "Integer", "Long", "int", "long" -> "integer";
        case "Boolean", "boolean" -> "boolean";
        case "Double", "double" -> "number";
        default -> c.getSimpleName();
      };
    }
    return t.getTypeName();
  }
}
