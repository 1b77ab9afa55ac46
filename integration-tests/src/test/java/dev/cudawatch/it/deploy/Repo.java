package dev.cudawatch.it.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** The repository's deployment files, read as the tools that use them would. */
final class Repo {
  static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  private static final ObjectMapper YAML = new YAMLMapper(new YAMLFactory());

  private Repo() {}

  static Path path(String relative) {
    return ROOT.resolve(relative);
  }

  static JsonNode yaml(String relative) throws IOException {
    return YAML.readTree(Files.readString(path(relative)));
  }

  static JsonNode yamlText(String text) throws IOException {
    return YAML.readTree(text);
  }

  /** Every document of a multi-document YAML file. */
  static List<JsonNode> documents(Path file) throws IOException {
    List<JsonNode> out = new ArrayList<>();
    try (var parser = YAML.getFactory().createParser(Files.readString(file))) {
      var it = YAML.readValues(parser, JsonNode.class);
      while (it.hasNext()) {
        JsonNode n = it.next();
        if (n != null && !n.isNull() && !n.isMissingNode()) {
          out.add(n);
        }
      }
    }
    return out;
  }

  /** A YAML text (e.g. a ConfigMap's value) written to a temporary file for ConfigLoader. */
  static Path temp(String text) throws IOException {
    Path f = Files.createTempFile("cudawatch-config-", ".yaml");
    f.toFile().deleteOnExit();
    Files.writeString(f, text);
    return f;
  }
}
