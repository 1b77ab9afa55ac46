package dev.cudawatch.diagnosis.advice;

import java.util.Map;
import java.util.regex.Pattern;

/**
 * Fills {@code {field}} placeholders; a {@code [bracketed part]} disappears when a field inside it
 * is missing, so one template serves messages that state more or fewer values.
 */
public final class SummaryTemplate {
  private static final Pattern PLACEHOLDER = Pattern.compile("\\{[a-z_]+\\}");
  private static final Pattern SPACES = Pattern.compile("\\s+");

  private SummaryTemplate() {}

  public static String render(String template, Map<String, Object> fields) {
    if (template == null) {
      return null;
    }
    StringBuilder out = new StringBuilder();
    int i = 0;
    int n = template.length();
    while (i < n) {
      if (template.charAt(i) == '[') {
        int close = template.indexOf(']', i);
        if (close > 0) {
          String part = fill(template.substring(i + 1, close), fields);
          if (part != null) {
            out.append(part);
          }
          i = close + 1;
          continue;
        }
      }
      int next = template.indexOf('[', i + 1);
      if (next < 0) {
        next = n;
      }
      String seg = template.substring(i, next);
      String filled = fill(seg, fields);
      out.append(filled != null ? filled : PLACEHOLDER.matcher(seg).replaceAll("?"));
      i = next;
    }
    return SPACES.matcher(out).replaceAll(" ").strip();
  }

  /** The part with placeholders filled, or null when one is missing. */
  private static String fill(String part, Map<String, Object> fields) {
    StringBuilder out = new StringBuilder();
    int i = 0;
    while (i < part.length()) {
      int open = part.indexOf('{', i);
      if (open < 0) {
        out.append(part, i, part.length());
        break;
      }
      int close = part.indexOf('}', open);
      if (close < 0) {
        out.append(part, i, part.length());
        break;
      }
      out.append(part, i, open);
      String name = part.substring(open + 1, close);
      Object v = fields.get(name);
      if (v == null) {
        return null;
      }
      out.append(format(name, v));
      i = close + 1;
    }
    return out.toString();
  }

  static String format(String name, Object v) {
    if ((name.endsWith("_bytes") || name.endsWith("_bytes_per_second")) && v instanceof Long b) {
      return FieldValues.humanBytes(b);
    }
    return String.valueOf(v);
  }
}
