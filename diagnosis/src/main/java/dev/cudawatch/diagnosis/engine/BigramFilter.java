package dev.cudawatch.diagnosis.engine;

import java.util.List;
import java.util.Locale;

/**
 * A stateless first pass in front of {@link LinePrefilter}'s automaton: one table lookup per byte
 * pair, with nothing carried from byte to byte but the previous byte, so the CPU overlaps the
 * lookups that the automaton's walk must do one after the other (the walk was the whole cost of a
 * large file). Each literal is reduced to one of its byte pairs, the rarest in a sample of the file
 * being read, so a line without any chosen pair cannot hold a literal; a line with one is checked
 * by the automaton, which decides exactly. Which pairs are chosen changes the speed, never the
 * lines flagged. Immutable once built.
 */
public final class BigramFilter {
  /** The pair's second byte ends a line. */
  public static final byte NEWLINE = 1;

  /** The pair may be part of a literal, or its second byte is ESC or NUL: check the line. */
  public static final byte CANDIDATE = 2;

  private final byte[] table = new byte[1 << 16];

  /**
   * @param literals lower-case printable ASCII, as {@link LinePrefilter} takes them
   * @param sample bytes of the file to be scanned, to rank the pairs by how common they are
   */
  BigramFilter(List<String> literals, byte[] sample, int from, int to) {
    int[] seen = new int[1 << 16];
    int prev = '\n';
    for (int i = from; i < to; i++) {
      int c = lower(sample[i] & 0xff);
      seen[prev << 8 | c]++;
      prev = c;
    }
    for (String any : literals) {
      String lit = any.toLowerCase(Locale.ROOT);
      if (lit.length() == 1) {
        // no pair to choose: any byte before it
        for (int x = 0; x < 256; x++) {
          mark(x, lit.charAt(0));
        }
        continue;
      }
      int best = 0;
      for (int i = 1; i < lit.length() - 1; i++) {
        if (seen[pair(lit, i)] < seen[pair(lit, best)]) {
          best = i;
        }
      }
      for (int x : cases(lit.charAt(best))) {
        for (int y : cases(lit.charAt(best + 1))) {
          table[x << 8 | y] = CANDIDATE;
        }
      }
    }
    for (int x = 0; x < 256; x++) {
      // the automaton reports these bytes apart (see LinePrefilter.SPECIAL)
      table[x << 8 | 0x1b] = CANDIDATE;
      table[x << 8] = CANDIDATE;
      table[x << 8 | '\n'] = NEWLINE;
    }
  }

  /** Indexed by the previous byte shifted left by 8, or-ed with the byte. */
  public byte[] table() {
    return table;
  }

  private void mark(int x, char c) {
    for (int y : cases(c)) {
      table[x << 8 | y] = CANDIDATE;
    }
  }

  private static int pair(String s, int i) {
    return s.charAt(i) << 8 | s.charAt(i + 1);
  }

  private static int lower(int c) {
    return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
  }

  private static int[] cases(char c) {
    return c >= 'a' && c <= 'z' ? new int[] {c, c - ('a' - 'A')} : new int[] {c};
  }
}
