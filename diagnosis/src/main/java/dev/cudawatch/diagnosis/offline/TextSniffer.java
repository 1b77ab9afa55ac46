package dev.cudawatch.diagnosis.offline;

/**
 * Tells a binary file from a log by its first bytes: NULs, or mostly bytes that no log prints
 * (control characters other than tab, newline, carriage return, backspace, form feed, bell and the
 * escape of colours; invalid UTF-8). A Latin-1 log has a few invalid bytes, not a third; a log may
 * carry a stray NUL in a line, while the headers of binary formats (ELF, tar, zip) are full of
 * them.
 */
final class TextSniffer {
  /** The share of non-text bytes above which a file is binary. */
  private static final double MAX_NON_TEXT = 0.3;

  /** The share of NULs above which a file is binary. */
  private static final double MAX_NUL = 0.01;

  private TextSniffer() {}

  static boolean isBinary(byte[] head) {
    int nonText = 0;
    int nuls = 0;
    int i = 0;
    while (i < head.length) {
      int b = head[i] & 0xff;
      if (b < 0x80) {
        if (b == 0) {
          nuls++;
        }
        if ((b < 0x20 && !isTextControl(b)) || b == 0x7f) {
          nonText++;
        }
        i++;
        continue;
      }
      int n = utf8Length(head, i);
      if (n < 0) {
        nonText++;
        i++;
      } else {
        i += n;
      }
    }
    return nuls > head.length * MAX_NUL || nonText > head.length * MAX_NON_TEXT;
  }

  private static boolean isTextControl(int b) {
    return b == '\t' || b == '\n' || b == '\r' || b == '\b' || b == '\f' || b == 0x07 || b == 0x0b
        || b == 0x1b;
  }

  /**
   * The length of the UTF-8 sequence at {@code i}, or -1 if it is invalid; a sequence cut by the
   * end of the sample counts as valid.
   */
  private static int utf8Length(byte[] s, int i) {
    int b = s[i] & 0xff;
    int n;
    if (b >= 0xc2 && b <= 0xdf) {
      n = 2;
    } else if (b >= 0xe0 && b <= 0xef) {
      n = 3;
    } else if (b >= 0xf0 && b <= 0xf4) {
      n = 4;
    } else {
      return -1;
    }
    for (int k = 1; k < n; k++) {
      if (i + k >= s.length) {
        return s.length - i;
      }
      if ((s[i + k] & 0xc0) != 0x80) {
        return -1;
      }
    }
    return n;
  }
}
