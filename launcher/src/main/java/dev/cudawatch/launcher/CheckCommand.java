package dev.cudawatch.launcher;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.cudawatch.alerts.AlertsSettings;
import dev.cudawatch.common.cli.Cli;
import dev.cudawatch.common.cli.LogOptions;
import dev.cudawatch.common.config.ConfigException;
import dev.cudawatch.common.config.ConfigLoader;
import dev.cudawatch.diagnosis.catalog.CatalogLoader;
import dev.cudawatch.diagnosis.offline.CatalogTests;
import dev.cudawatch.ingest.AgentSettings;
import dev.cudawatch.processor.config.ProcessorSettings;
import dev.cudawatch.processor.rules.RuleSet;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code cudawatch check FILE...}: validates agent, processor and alerts configurations, signature
 * catalogs and rule files with the loaders the services use, as {@code promtool check} does.
 */
@Command(
    name = "check",
    description = {
      "Validate cudawatch files before deploying them: agent, processor and alerts configurations,",
      "signature catalogs and rule files, each with the loader the service uses (strict YAML,",
      "unknown keys, values). The kind is told from the file's keys (--kind to say it).",
      "Prints one line per problem, file:line: key: reason."
    },
    exitCodeListHeading = "%nExit status:%n",
    exitCodeList = {"0:every file is fine", "1:a file has a problem"})
public final class CheckCommand implements Callable<Integer> {
  /** What a file can be; each knows its top-level keys. */
  enum Kind {
    AGENT("agent config"),
    PROCESSOR("processor config"),
    ALERTS("alerts config"),
    CATALOG("catalog"),
    RULES("rules file");

    final String title;

    Kind(String title) {
      this.title = title;
    }
  }

  private static final YAMLMapper YAML = new YAMLMapper();

  @CommandLine.Mixin LogOptions logOptions;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Parameters(paramLabel = "FILE", arity = "1..*", description = "files to check")
  List<Path> files = new ArrayList<>();

  @Option(
      names = "--kind",
      paramLabel = "KIND",
      description = "check every FILE as this kind: ${COMPLETION-CANDIDATES}")
  Kind kind;

  public static void main(String[] args) {
    Cli.main(new CheckCommand(), args);
  }

  @Override
  public Integer call() throws IOException {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    int bad = 0;
    for (Path f : files) {
      List<String> problems = new ArrayList<>();
      List<String> checked = new ArrayList<>();
      try {
        if (kind != null) {
          problems.addAll(check(f, kind));
          checked.add(kind.title);
        } else {
          List<Map.Entry<String, String>> embedded = ConfigMaps.cudawatchEntries(f);
          if (!embedded.isEmpty()) {
            for (var e : embedded) {
              Kind k = kindOfEntry(e.getKey());
              problems.addAll(ConfigMaps.checkEntry(f, e.getKey(), e.getValue(), k));
              checked.add(k.title + " in ConfigMap data " + e.getKey());
            }
          } else {
            Kind k = detect(f);
            problems.addAll(check(f, k));
            checked.add(k.title);
          }
        }
      } catch (ConfigException e) {
        problems.add(e.getMessage());
      }
      if (problems.isEmpty()) {
        out.println(f + ": ok (" + String.join(", ", checked) + ")");
      } else {
        bad++;
        problems.forEach(err::println);
      }
    }
    out.flush();
    err.flush();
    return bad == 0 ? 0 : 1;
  }

  /** {@code agent.yaml} in a ConfigMap's data is an agent config, and so on. */
  static Kind kindOfEntry(String key) {
    for (Kind k : List.of(Kind.AGENT, Kind.PROCESSOR, Kind.ALERTS)) {
      if (key.toLowerCase(Locale.ROOT).startsWith(k.name().toLowerCase(Locale.ROOT))) {
        return k;
      }
    }
    return key.contains("rules") ? Kind.RULES : Kind.CATALOG;
  }

  /** The problems of {@code file} read as {@code kind}; empty when it is fine. */
  static List<String> check(Path file, Kind kind) {
    try {
      return switch (kind) {
        case AGENT -> ConfigLoader.problems(file, AgentSettings.class);
        case ALERTS -> ConfigLoader.problems(file, AlertsSettings.class);
        case PROCESSOR -> ConfigLoader.problems(file, ProcessorSettings.class);
        case CATALOG -> {
          new CatalogLoader().load(List.of(file));
          CatalogTests.read(file);
          yield List.of();
        }
        case RULES -> {
          RuleSet.load(Map.of(file.toString(), Files.readAllBytes(file)));
          yield List.of();
        }
      };
    } catch (ConfigException e) {
      return List.of(e.getMessage());
    } catch (IOException e) {
      return List.of(file + ": cannot read: " + e.getMessage());
    }
  }

  /** Tells the kind from the top-level keys (and, between configs that fit, the file's name). */
  static Kind detect(Path file) {
    JsonNode top;
    try {
      top = YAML.readTree(file.toFile());
    } catch (IOException e) {
      throw new ConfigException(
          file + ": not valid YAML: " + e.getMessage().lines().findFirst().orElse(""));
    }
    if (top == null || !top.isObject()) {
      throw new ConfigException(file + ":1: not a mapping of keys, so not a cudawatch file");
    }
    Set<String> keys = new LinkedHashSet<>();
    for (Iterator<String> it = top.fieldNames(); it.hasNext(); ) {
      keys.add(it.next());
    }
    if ((keys.contains("signatures") || keys.contains("macros") || keys.contains("step_times"))
        && CatalogLoader.SECTIONS.containsAll(keys)) {
      return Kind.CATALOG;
    }
    if (keys.contains("rules") && Set.of("version", "rules").containsAll(keys)) {
      return Kind.RULES;
    }
    String name = file.getFileName().toString().toLowerCase(Locale.ROOT);
    Kind best = null;
    int bestScore = 0;
    for (Kind k : List.of(Kind.AGENT, Kind.PROCESSOR, Kind.ALERTS)) {
      Set<String> known = ConfigKeys.topLevel(configType(k));
      long overlap = keys.stream().filter(known::contains).count();
      if (overlap * 2 < keys.size()) {
        continue; // mostly foreign keys: some other program's file
      }
      int score = (int) overlap * 4;
      if (known.containsAll(keys)) {
        score += 2;
      }
      if (name.contains(k.name().toLowerCase(Locale.ROOT))) {
        score += 3;
      }
      if (score > bestScore) {
        best = k;
        bestScore = score;
      }
    }
    if (best == null || bestScore < 4) {
      throw new ConfigException(
          file
              + ":1: not a cudawatch configuration, catalog or rules file (top-level keys: "
              + String.join(", ", keys)
              + "); give --kind to check it as one");
    }
    return best;
  }

  static Class<?> configType(Kind k) {
    return switch (k) {
      case AGENT -> AgentSettings.class;
      case PROCESSOR -> ProcessorSettings.class;
      case ALERTS -> AlertsSettings.class;
      default -> throw new IllegalArgumentException(k.name());
    };
  }
}
