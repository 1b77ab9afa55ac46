package dev.cudawatch.launcher;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * cudawatch files shipped inside Kubernetes ConfigMaps ({@code data: {agent.yaml: |...}}), so that
 * {@code check} validates what a cluster would mount, not only loose files.
 */
final class ConfigMaps {
  private static final YAMLMapper YAML = new YAMLMapper();
  private static final Pattern NAMES =
      Pattern.compile("(agent|alerts|processor|rules|catalog)[\\w.-]*\\.ya?ml");

  private ConfigMaps() {}

  /** The (data key, text) of every cudawatch file in the ConfigMaps of {@code file}, if any. */
  static List<Map.Entry<String, String>> cudawatchEntries(Path file) {
    List<Map.Entry<String, String>> out = new ArrayList<>();
    try (MappingIterator<JsonNode> docs =
        YAML.readerFor(JsonNode.class).readValues(file.toFile())) {
      while (docs.hasNext()) {
        JsonNode doc = docs.next();
        if (doc == null || !"ConfigMap".equals(doc.path("kind").asText()) || !doc.has("data")) {
          continue;
        }
        doc.get("data")
            .properties()
            .forEach(
                e -> {
                  if (NAMES.matcher(e.getKey()).matches()) {
                    out.add(Map.entry(e.getKey(), e.getValue().asText()));
                  }
                });
      }
    } catch (IOException | RuntimeException e) {
      return List.of(); // not a Kubernetes file; the plain check reports what is wrong with it
    }
    return out;
  }

  /**
   * Checks one embedded file; its problems name {@code FILE[data.KEY]} and lines within the
   * embedded text.
   */
  static List<String> checkEntry(Path file, String key, String text, CheckCommand.Kind kind)
      throws IOException {
    Path dir = Files.createTempDirectory("cudawatch-check-");
    Path tmp = dir.resolve(key);
    try {
      Files.writeString(tmp, text, StandardCharsets.UTF_8);
      List<String> problems = new ArrayList<>();
      for (String p : CheckCommand.check(tmp, kind)) {
        problems.add(p.replace(tmp.toString(), file + "[data." + key + "]"));
      }
      return problems;
    } finally {
      Files.deleteIfExists(tmp);
      Files.deleteIfExists(dir);
    }
  }
}
