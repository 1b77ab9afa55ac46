package dev.cudawatch.diagnosis.engine;

/**
 * Follows the Python tracebacks of a stream to know the user's own frame nearest a failure (the
 * last frame outside the framework's and the interpreter's files), kept in the stream's state.
 */
final class Tracebacks {
  private final StreamState st;
  private final int frameWindowLines;

  Tracebacks(StreamState st, int frameWindowLines) {
    this.st = st;
    this.frameWindowLines = frameWindowLines;
  }

  /** Notes a traceback header or a user frame on line {@code n}. */
  void track(String text, long n) {
    int i = 0;
    int len = text.length();
    while (i < len && text.charAt(i) == ' ') {
      i++;
    }
    if (i >= len) {
      return;
    }
    char c = text.charAt(i);
    if (c == 'T' && text.startsWith("Traceback (most recent call last)", i)) {
      st.userFrame = null;
      st.tracebackLine = n;
    } else if (c == 'F' && text.startsWith("File \"", i)) {
      int q = text.indexOf('"', i + 6);
      if (q < 0) {
        return;
      }
      String path = text.substring(i + 6, q);
      int l = text.indexOf(", line ", q);
      if (l < 0) {
        return;
      }
      int d = l + 7;
      int e = d;
      while (e < len && Character.isDigit(text.charAt(e))) {
        e++;
      }
      if (e > d && isUserPath(path)) {
        st.userFrame = path + ":" + text.substring(d, e);
        if (st.tracebackLine < n - frameWindowLines) {
          st.tracebackLine = n; // frames without a header (a truncated log)
        }
      }
    }
  }

  static boolean isUserPath(String path) {
    return !(path.startsWith("<")
        || path.endsWith(".pyx")
        || path.contains("site-packages")
        || path.contains("dist-packages")
        || path.contains("/lib/python")
        || path.contains("/lib64/python")
        || path.contains("\\Lib\\"));
  }

  /** Gives the incident the user frame of a traceback near its first line. */
  void addUserFrame(OpenIncident inc) {
    if (st.userFrame != null && st.tracebackLine >= inc.firstLine - frameWindowLines) {
      inc.fields.putIfAbsent("user_frame", st.userFrame);
    }
  }
}
