package dev.cudawatch.diagnosis.engine;

import dev.cudawatch.common.text.Ansi;

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
      s = Ansi.strip(s);
    }
    if (s.indexOf('\u0000') >= 0) {
      s = s.replace('\u0000', ' ');
    }
    Integer rank = null;
    int glued = s.indexOf("[rank");
    if (glued > 0 && isRankPrefix(s, glued)) {
      // torchrun's prefix glued onto a progress-bar redraw (or after a line number): what
      // precedes it is the bar's last state, what follows is the rank's line
      s = s.substring(glued);
    }
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

  /** {@code [rankN]:} at {@code at}: digits, a closing bracket and a colon. */
  private static boolean isRankPrefix(String s, int at) {
    int q = at + 5;
    int digits = q;
    while (q < s.length() && Character.isDigit(s.charAt(q))) {
      q++;
    }
    return q > digits && q + 1 < s.length() && s.charAt(q) == ']' && s.charAt(q + 1) == ':';
  }
}
