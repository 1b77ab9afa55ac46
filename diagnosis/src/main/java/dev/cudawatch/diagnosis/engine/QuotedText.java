package dev.cudawatch.diagnosis.engine;

/**
 * Tells a line that only quotes an error (a diff of docs or code, a code comment) from a live log
 * line. Only lines whose form is unambiguous count as quoted: a line of a unified diff ({@code +}
 * or {@code -} followed by text, never {@code ->} or {@code --}) or a source comment ({@code //},
 * {@code /*}, {@code * }). Everything else, prose included, is read as live: a user pasting their
 * own error into a sentence looks exactly like documentation quoting it.
 */
final class QuotedText {
  private QuotedText() {}

  /**
   * Whether line {@code text} is inside a unified diff hunk, given whether the line before was: a
   * hunk header ({@code @@ -a,b +c,d @@}) starts quoted text that runs while lines keep the diff's
   * form (context lines start with a space, changes with + or -), since code and docs under review
   * name errors without any failing.
   */
  static boolean inDiffHunk(boolean wasInHunk, String text) {
    if (text.startsWith("@@ -")) {
      return true;
    }
    if (wasInHunk && !text.isEmpty()) {
      char c = text.charAt(0);
      return c == ' ' || c == '+' || c == '-' || c == '\\';
    }
    return wasInHunk;
  }

  static boolean isQuoted(String line) {
    if (line.isEmpty()) {
      return false;
    }
    char c = line.charAt(0);
    if ((c == '+' || c == '-') && line.length() > 1) {
      char d = line.charAt(1);
      // "+text", "-  code", "+\tcode"; not "->", "--", "-1", "+0x..."
      return Character.isLetter(d)
          || d == '"'
          || d == '\''
          || d == '\t'
          || (d == ' ' && line.length() > 2 && (line.charAt(2) == ' ' || line.charAt(2) == '\t'));
    }
    int i = 0;
    while (i < line.length() && (line.charAt(i) == ' ' || line.charAt(i) == '\t')) {
      i++;
    }
    return line.startsWith("//", i)
        || line.startsWith("/*", i)
        || line.startsWith("* ", i)
        || (line.startsWith("| ", i) && line.indexOf("` |") > 0);
  }
}
