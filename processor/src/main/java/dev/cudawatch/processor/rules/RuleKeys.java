package dev.cudawatch.processor.rules;

import java.util.ArrayList;
import java.util.List;

/**
 * The operator key of a rule: its name and its key fields' values, {@code rule|v1|v2}, each field
 * escaped ({@code \} as {@code \\}, {@code |} as {@code \|}) so that a value holding {@code |} (a
 * job id such as {@code train|v2}) is read back as it was, and a resolved alert carries the labels
 * of the firing one. Keys without either character are unchanged, so state from older checkpoints
 * keeps its keys.
 */
final class RuleKeys {
  private RuleKeys() {}

  static String of(String rule, List<String> values) {
    StringBuilder b = new StringBuilder();
    escape(rule, b);
    for (String v : values) {
      escape(v, b.append('|'));
    }
    return b.toString();
  }

  /** The fields of a key: the rule's name first, then its values. */
  static List<String> parse(String key) {
    List<String> out = new ArrayList<>();
    StringBuilder f = new StringBuilder();
    for (int i = 0; i < key.length(); i++) {
      char c = key.charAt(i);
      if (c == '\\' && i + 1 < key.length()) {
        f.append(key.charAt(++i));
      } else if (c == '|') {
        out.add(f.toString());
        f.setLength(0);
      } else {
        f.append(c);
      }
    }
    out.add(f.toString());
    return out;
  }

  static String rule(String key) {
    return parse(key).get(0);
  }

  private static void escape(String s, StringBuilder b) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '\\' || c == '|') {
        b.append('\\');
      }
      b.append(c);
    }
  }
}
