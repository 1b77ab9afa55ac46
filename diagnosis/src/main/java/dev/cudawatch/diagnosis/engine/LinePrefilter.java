package dev.cudawatch.diagnosis.engine;

import dev.cudawatch.diagnosis.catalog.Catalog;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A byte-level automaton that flags every line {@link StreamClassifier#accept} could do more than
 * count: a line holding a catalog keyword, a traceback header or frame ({@link Tracebacks}), or a
 * diff hunk header ({@link QuotedText}), matched case-insensitively on the raw bytes. A line's
 * normalised text is a substring of its raw bytes except where normalisation strips escape
 * sequences or replaces NULs, so the raw scan flags a superset; those two bytes are reported apart
 * so the caller checks such lines exactly. Immutable and shared by every thread.
 */
public final class LinePrefilter {
  /** The line holds a keyword or a state marker: it goes to the stream's classifier. */
  static final int HIT = -1;

  /** ESC or NUL: the line's normalised text is not a substring of its bytes; check it exactly. */
  static final int SPECIAL = -2;

  /** End of line. */
  static final int NEWLINE = -3;

  /** Lines that change a stream's state without a keyword (see Tracebacks and QuotedText). */
  static final List<String> STATE_MARKERS =
      List.of("traceback (most recent call last)", "file \"", "@@ -");

  private final List<String> literals;
  private final int classes;
  private final byte[] byteClass = new byte[256];
  private final byte[] charClass = new byte[128];

  /** Transitions, indexed by state times {@link #classes} plus class; states are premultiplied. */
  private final int[] delta;

  public LinePrefilter(Catalog catalog) {
    this(literals(catalog));
  }

  public LinePrefilter(List<String> literals) {
    this.literals = List.copyOf(literals);
    // class 0: bytes in no literal; 1: newline; 2: ESC and NUL; then one per literal byte
    int next = 3;
    for (String lit : literals) {
      for (char c : lit.toCharArray()) {
        if (c >= 128 || c == '\n' || c == 0x1b || c == 0) {
          throw new IllegalArgumentException("prefilter literal must be printable ASCII: " + lit);
        }
        if (byteClass[c] == 0) {
          byteClass[c] = (byte) next++;
        }
      }
    }
    for (char c = 'A'; c <= 'Z'; c++) {
      byteClass[c] = byteClass[Character.toLowerCase(c)];
    }
    System.arraycopy(byteClass, 0, charClass, 0, 128);
    byteClass['\n'] = 1;
    byteClass[0x1b] = 2;
    byteClass[0] = 2;
    this.classes = next;

    // arrays, not boxed maps: this runs interpreted at every start-up (see KeywordMatcher)
    int maxStates = 1;
    for (String lit : literals) {
      maxStates += lit.length();
    }
    int[] raw = new int[maxStates * classes];
    boolean[] accepting = new boolean[maxStates];
    int n = 1;
    for (String lit : literals) {
      int s = 0;
      for (char c : lit.toCharArray()) {
        int cls = byteClass[c];
        int t = raw[s * classes + cls];
        if (t == 0) {
          t = n++;
          raw[s * classes + cls] = t;
        }
        s = t;
      }
      accepting[s] = true;
    }
    int[] fail = new int[n];
    int[] queue = new int[n];
    int head = 0;
    int tail = 0;
    for (int cls = 3; cls < classes; cls++) {
      if (raw[cls] != 0) {
        queue[tail++] = raw[cls];
      }
    }
    while (head < tail) {
      int s = queue[head++];
      if (accepting[fail[s]]) {
        accepting[s] = true;
      }
      for (int cls = 3; cls < classes; cls++) {
        int t = raw[s * classes + cls];
        if (t == 0) {
          raw[s * classes + cls] = raw[fail[s] * classes + cls];
        } else {
          fail[t] = raw[fail[s] * classes + cls];
          queue[tail++] = t;
        }
      }
    }
    delta = new int[n * classes];
    for (int s = 0; s < n; s++) {
      delta[s * classes] = 0; // a byte in no literal breaks every partial match
      delta[s * classes + 1] = NEWLINE;
      delta[s * classes + 2] = SPECIAL;
      for (int cls = 3; cls < classes; cls++) {
        int t = raw[s * classes + cls];
        delta[s * classes + cls] = accepting[t] ? HIT : t * classes;
      }
    }
  }

  /**
   * The stateless first pass for a file whose first bytes are {@code sample[from, to)}: it ranks
   * each literal's byte pairs by how often they occur there.
   */
  public BigramFilter bigrams(byte[] sample, int from, int to) {
    return new BigramFilter(literals, sample, from, to);
  }

  static List<String> literals(Catalog catalog) {
    List<String> out = new ArrayList<>(catalog.keywords().literals());
    for (String m : STATE_MARKERS) {
      out.add(m.toLowerCase(Locale.ROOT));
    }
    return out;
  }

  /**
   * Scans bytes from {@code from}, in state {@code state} (0 at a line's start), while in one line.
   *
   * @return the index of the byte that ended the scan and what it was, packed as {@code index << 2
   *     | kind} with kind 0 for {@link #NEWLINE}, 1 for {@link #HIT}, 2 for {@link #SPECIAL}; or
   *     {@code to << 2 | 3} when the bytes ran out first
   */
  public long scan(byte[] b, int from, int to, int state) {
    final int[] d = delta;
    final byte[] cc = byteClass;
    int s = state;
    for (int i = from; i < to; i++) {
      int t = d[s + cc[b[i] & 0xff]];
      if (t >= 0) {
        s = t;
        continue;
      }
      return (long) i << 2 | kind(t);
    }
    return (long) to << 2 | 3;
  }

  /**
   * Steps two lanes over the same bytes together until either meets a newline, a keyword or a
   * special byte. A DFA walk waits on one table load per byte; two independent walks overlap their
   * loads, which makes the pair about 1.5 times as fast as one lane. A chunk scanned with a {@link
   * BigramFilter} in front (as classify scans) walks only its candidate lines, with {@link #scan};
   * this is the chunk scan without one, and the reference its tests compare with.
   *
   * @param lanes {@code {a, stateA, c, stateC}}: each lane's next byte and state, updated in place;
   *     a lane that meets an event is left on that byte, in the state before it
   * @return the event as {@link #scan} packs it, shifted left by one more bit and with bit 2 set
   *     when it is lane c's ({@code index << 3 | lane << 2 | kind}); or -1 when a lane reached its
   *     end first
   */
  public long scanPair(byte[] b, int[] lanes, int aEnd, int cEnd) {
    final int[] d = delta;
    final byte[] cc = byteClass;
    int a = lanes[0];
    int sa = lanes[1];
    int c = lanes[2];
    int sc = lanes[3];
    long event = -1;
    while (a < aEnd && c < cEnd) {
      int ta = d[sa + cc[b[a] & 0xff]];
      int tc = d[sc + cc[b[c] & 0xff]];
      if ((ta | tc) >= 0) {
        sa = ta;
        sc = tc;
        a++;
        c++;
        continue;
      }
      if (ta < 0) {
        event = (long) a << 3 | kind(ta); // lane c stays on its byte and redoes it next time
      } else {
        sa = ta;
        event = (long) c << 3 | 4 | kind(tc);
        a++;
      }
      break;
    }
    lanes[0] = a;
    lanes[1] = sa;
    lanes[2] = c;
    lanes[3] = sc;
    return event;
  }

  private static int kind(int t) {
    return t == NEWLINE ? 0 : t == HIT ? 1 : 2;
  }

  /** Whether a normalised line holds a keyword or a state marker (exact for any text). */
  public boolean flags(CharSequence text) {
    final int[] d = delta;
    final byte[] cc = charClass;
    int s = 0;
    for (int i = 0, n = text.length(); i < n; i++) {
      char c = text.charAt(i);
      int t = d[s + (c < 128 ? cc[c] : 0)];
      if (t == HIT) {
        return true;
      }
      s = t < 0 ? 0 : t;
    }
    return false;
  }
}
