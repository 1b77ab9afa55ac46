package dev.cudawatch.diagnosis.engine;

/** Normalises raw lines; stateless and allocation-free for ordinary lines. */
public final class LineNormalizer {
  /** Lines longer than this are cut before matching: error messages are short, junk is not. */
  public static final int MAX_LINE_CHARS = 64 * 1024;

  private LineNormalizer() {}

  public static NormalizedLine normalize(String raw) {
    String s = raw;
    if (s.length() > MAX_LINE_CHARS) {
      s = s.substring(0, MAX_LINE_CHARS);
    }
    int end = s.length();
    while (end > 0 && (s.charAt(end - 1) == '\r' || s.charAt(end - 1) == '\n')) {
      end--;
    }
    if (end != s.length()) {
      s = s.substring(0, end);
    }
    int cr = s.lastIndexOf('\r');
    if (cr >= 0) {
      s = s.substring(cr + 1); // a progress bar: only its last state is on screen
    }
    if (s.indexOf('\u001b') >= 0) {
      s = stripAnsi(s);
    }
    if (s.indexOf('\u0000') >= 0) {
      s = s.replace('\u0000', ' ');
    }
    Integer rank = null;
    if (s.startsWith("[rank") || s.startsWith("[default")) {
      int p = s.startsWith("[rank") ? 5 : 8;
      int q = p;
      while (q < s.length() && Character.isDigit(s.charAt(q))) {
        q++;
      }
      if (q > p && q < s.length() && s.charAt(q) == ']') {
        rank = Integer.parseInt(s.substring(p, Math.min(q, p + 9)));
        int rest = q + 1;
        if (rest < s.length() && s.charAt(rest) == ':') {
          rest++;
        }
        s = s.substring(rest);
        if (s.startsWith(" ")) {
          s = s.substring(1);
        }
      }
    }
    return new NormalizedLine(s, rank);
  }

  /** Removes CSI ({@code ESC [ ... letter}) and two-character escape sequences. */
  static String stripAnsi(String s) {
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
        int j = i + 2; // OSC: ends at BEL or ESC \
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
