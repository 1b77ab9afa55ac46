package dev.cudawatch.ingest.attribution;

import java.util.ArrayList;
import java.util.List;

/**
 * Slurm's compressed host lists ({@code dgx-[01-04,08]}, {@code a[1-2]-ib,b3}), as far as the agent
 * needs them: whether a node is in one. Bounded: a range wider than 65536 names no node.
 */
public final class Hostlist {
  private Hostlist() {}

  /** Whether {@code node} is one of the hosts {@code expr} names. */
  public static boolean contains(String expr, String node) {
    for (String part : split(expr)) {
      if (matches(part, node)) {
        return true;
      }
    }
    return false;
  }

  /** Top-level comma-separated parts (commas inside brackets belong to a range). */
  static List<String> split(String expr) {
    List<String> out = new ArrayList<>();
    int depth = 0;
    int start = 0;
    for (int i = 0; i < expr.length(); i++) {
      char c = expr.charAt(i);
      if (c == '[') {
        depth++;
      } else if (c == ']') {
        depth--;
      } else if (c == ',' && depth == 0) {
        out.add(expr.substring(start, i));
        start = i + 1;
      }
    }
    out.add(expr.substring(start));
    return out;
  }

  /** One part, with at most one bracket: {@code prefix[ranges]suffix}. */
  private static boolean matches(String part, String node) {
    int open = part.indexOf('[');
    int close = part.indexOf(']', open + 1);
    if (open < 0 || close < 0) {
      return part.equals(node);
    }
    String prefix = part.substring(0, open);
    String suffix = part.substring(close + 1);
    if (!node.startsWith(prefix)
        || !node.endsWith(suffix)
        || node.length() < prefix.length() + suffix.length()) {
      return false;
    }
    String middle = node.substring(prefix.length(), node.length() - suffix.length());
    for (String range : part.substring(open + 1, close).split(",")) {
      int dash = range.indexOf('-');
      String lo = dash < 0 ? range : range.substring(0, dash);
      String hi = dash < 0 ? range : range.substring(dash + 1);
      try {
        long a = Long.parseLong(lo);
        long b = Long.parseLong(hi);
        long m = Long.parseLong(middle);
        // zero padding ("01-04") is part of the name: "1" is not "01"
        boolean padded = lo.length() > 1 && lo.startsWith("0");
        if (b - a <= 65_536
            && m >= a
            && m <= b
            && (!padded || middle.length() == lo.length())
            && (padded || !middle.startsWith("0") || middle.equals("0"))) {
          return true;
        }
      } catch (NumberFormatException e) {
        // not a numeric range: no match in it
      }
    }
    return false;
  }
}
