package dev.cudawatch.common.config;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;

/**
 * Finds the line of a dotted key ({@code notifications.webhook_url}, {@code inputs[1].format}) in a
 * YAML text, so that an error found after binding can still say {@code file:line}.
 */
public final class YamlLines {
  private static final YAMLFactory YAML = new YAMLFactory();

  private final String target;
  private int bestLine;
  private int bestLength = -1;

  private YamlLines(String target) {
    this.target = target;
  }

  /**
   * The line of {@code key}, or of its deepest ancestor present in the text; 0 when none is (the
   * key was absent and its default is what is wrong, or the text does not parse).
   */
  public static int lineOf(byte[] yaml, String key) {
    if (yaml == null || key == null || key.isEmpty()) {
      return 0;
    }
    YamlLines finder = new YamlLines(key);
    try (JsonParser p = YAML.createParser(yaml)) {
      if (p.nextToken() != null) {
        finder.value(p, "");
      }
    } catch (IOException e) {
      // a text that does not parse has its own error with its own line
    }
    return finder.bestLine;
  }

  private void value(JsonParser p, String path) throws IOException {
    JsonToken t = p.currentToken();
    if (t == JsonToken.START_OBJECT) {
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String child = path.isEmpty() ? p.currentName() : path + "." + p.currentName();
        consider(child, p.currentTokenLocation().getLineNr());
        p.nextToken();
        value(p, child);
      }
    } else if (t == JsonToken.START_ARRAY) {
      int i = 0;
      while (p.nextToken() != JsonToken.END_ARRAY) {
        String child = path + "[" + i++ + "]";
        consider(child, p.currentTokenLocation().getLineNr());
        value(p, child);
      }
    }
  }

  private void consider(String path, int line) {
    boolean on =
        target.equals(path) || target.startsWith(path + ".") || target.startsWith(path + "[");
    if (on && path.length() > bestLength) {
      bestLength = path.length();
      bestLine = line;
    }
  }
}
