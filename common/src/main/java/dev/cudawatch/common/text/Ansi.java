package dev.cudawatch.common.text;

/** Removes terminal escape sequences (colours, cursor moves) from text. */
public final class Ansi {
  private Ansi() {}

  public static String strip(String s) {
    StringBuilder out = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c != '\u001b') {
        out.append(c);
        continue;
      }
      if (i + 1 < s.length() && s.charAt(i + 1) == '[') {
        int j = i + 2;
        while (j < s.length() && (s.charAt(j) < '@' || s.charAt(j) > '~')) {
          j++;
        }
        i = j;
      } else if (i + 1 < s.length() && s.charAt(i + 1) == ']') {
        int j = i + 2;
        while (j < s.length() && s.charAt(j) != '\u0007' && s.charAt(j) != '\u001b') {
          j++;
        }
        i = (j < s.length() && s.charAt(j) == '\u001b') ? j + 1 : j;
      } else {
        i++;
      }
    }
    return out.toString();
  }
}
