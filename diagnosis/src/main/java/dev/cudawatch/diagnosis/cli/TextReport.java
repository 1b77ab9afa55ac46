package dev.cudawatch.diagnosis.cli;

import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.diagnosis.engine.FieldValues;
import java.io.PrintStream;
import java.util.List;
import java.util.Map;

/** The readable report: per file, each incident with what it means and what to do next. */
final class TextReport implements Report {
  private final PrintStream out;
  private final boolean color;
  private int files;
  private int incidents;

  TextReport(PrintStream out, boolean color) {
    this.out = out;
    this.color = color;
  }

  @Override
  public void file(String file, List<Incident> list) {
    files++;
    incidents += list.size();
    out.println(
        style("1", file)
            + ": "
            + (list.isEmpty()
                ? "no incidents"
                : list.size() + (list.size() == 1 ? " incident" : " incidents")));
    for (Incident i : list) {
      out.println();
      String tag = i.root() ? style("1;31", "ROOT CAUSE") : style("2", "consequence");
      out.println(
          "  "
              + tag
              + "  "
              + style("1", i.incidentClass())
              + "  line "
              + i.line()
              + (i.count() > 1 ? "  ×" + i.count() : "")
              + "  ["
              + i.severity()
              + ", suspect: "
              + i.suspect()
              + "]");
      out.println("  " + i.summary());
      if (!i.fields().isEmpty()) {
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<String, Object> e : i.fields().entrySet()) {
          sb.append(sb.length() == 0 ? "" : ", ")
              .append(e.getKey())
              .append('=')
              .append(show(e.getKey(), e.getValue()));
        }
        out.println("  " + style("2", sb.toString()));
      }
      if (i.root()) {
        wrap("  ", i.explanation());
        if (!i.nextSteps().isEmpty()) {
          out.println("  " + style("1", "Next steps:"));
          for (String s : i.nextSteps()) {
            wrap("    - ", s);
          }
        }
      }
    }
    out.println();
  }

  @Override
  public void end() {
    if (files > 1) {
      out.println(files + " files, " + incidents + " incidents");
    }
  }

  private static String show(String key, Object v) {
    return key.endsWith("_bytes") && v instanceof Long b
        ? FieldValues.humanBytes(b)
        : String.valueOf(v);
  }

  private void wrap(String indent, String text) {
    if (text == null || text.isBlank()) {
      return;
    }
    StringBuilder line = new StringBuilder(indent);
    String pad = " ".repeat(indent.length());
    for (String word : text.split("\\s+")) {
      if (line.length() + word.length() + 1 > 100 && line.length() > indent.length()) {
        out.println(line);
        line = new StringBuilder(pad);
      }
      if (line.length() > pad.length()) {
        line.append(' ');
      }
      line.append(word);
    }
    out.println(line);
  }

  private String style(String code, String s) {
    return color ? "\u001b[" + code + "m" + s + "\u001b[0m" : s;
  }
}
