package dev.cudawatch.alerts;

import dev.cudawatch.common.wire.Alert;
import java.io.PrintStream;

/** One console line per alert state change, for a person watching {@code cudawatch local}. */
public final class AlertPrinter {
  private final PrintStream out;

  public AlertPrinter(PrintStream out) {
    this.out = out;
  }

  public void print(Alert a) {
    var l = a.labels();
    StringBuilder sb =
        new StringBuilder("ALERT ")
            .append(a.state().name().toLowerCase(java.util.Locale.ROOT))
            .append(' ')
            .append(a.alertName());
    for (String k : new String[] {"severity", "class", "host"}) {
      if (l.containsKey(k)) {
        sb.append(' ').append(k).append('=').append(l.get(k));
      }
    }
    String summary = a.annotations().get("summary");
    if (summary != null) {
      sb.append(" — ").append(summary);
    }
    String src = a.annotations().get("source");
    if (src != null) {
      sb.append(" (").append(src).append(')');
    }
    out.println(sb);
    out.flush();
  }
}
