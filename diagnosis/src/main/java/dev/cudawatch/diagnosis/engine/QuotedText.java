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
    return line.startsWith("//", i) || line.startsWith("/*", i) || line.startsWith("* ", i);
  }
}
