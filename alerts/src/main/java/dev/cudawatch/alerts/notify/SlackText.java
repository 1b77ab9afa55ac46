package dev.cudawatch.alerts.notify;

import java.util.Map;
import java.util.stream.Collectors;

/**
 * Makes text from logs safe for Slack: {@code &}, {@code <} and {@code >} are escaped as Slack's
 * docs require, so log content cannot form a mention ({@code <!channel>}, {@code <@U123>}) or a
 * disguised link ({@code <http://x|click>}); {@code @here}-style words get a zero-width space; and
 * log text goes into code blocks, where Slack neither links URLs nor formats, with backticks
 * replaced so it cannot close the block.
 */
final class SlackText {
  private SlackText() {}

  static String escape(String s) {
    return s.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replaceAll("@(?=(channel|here|everyone)\\b)", "@\u200B");
  }

  static String codeBlock(String s) {
    return "```" + escape(s.replace('`', '\u02CB')) + "```\n";
  }

  static String labels(Map<String, String> labels) {
    return labels.entrySet().stream()
        .map(
            e -> "`" + escape(e.getKey()) + "=" + escape(e.getValue()).replace('`', '\u02CB') + "`")
        .collect(Collectors.joining(" "));
  }
}
