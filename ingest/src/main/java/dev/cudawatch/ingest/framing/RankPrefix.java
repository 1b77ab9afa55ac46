package dev.cudawatch.ingest.framing;

/** torchrun's {@code [rankN]:} line prefix (its {@code --tee}/{@code --log-dir} output). */
public final class RankPrefix {
  private RankPrefix() {}

  /** The rank of a {@code [rankN]:} prefix, or null. */
  public static Integer of(String text) {
    if (!text.startsWith("[rank")) {
      return null;
    }
    int i = 5;
    while (i < text.length() && i < 12 && Character.isDigit(text.charAt(i))) {
      i++;
    }
    return i > 5 && i < text.length() && text.charAt(i) == ']'
        ? Integer.valueOf(text.substring(5, i))
        : null;
  }
}
