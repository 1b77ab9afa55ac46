package dev.cudawatch.diagnosis.cli;

import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.diagnosis.advice.FieldValues;
import dev.cudawatch.diagnosis.jobs.Culprit;
import dev.cudawatch.diagnosis.jobs.JobVerdicts;
import java.io.PrintStream;
import java.util.List;
import java.util.Map;

/** The readable report: per file, each incident with what it means and what to do next. */
final class TextReport implements Report {
  private final PrintStream out;
  private final boolean color;
  private int files;
  private int incidents;

  private final boolean oneJob;

  /**
   * @param oneJob the files are one job's ({@code --job}): each file's first failure is not the
   *     root cause, the job's is
   */
  TextReport(PrintStream out, boolean color, boolean oneJob) {
    this.out = out;
    this.color = color;
    this.oneJob = oneJob;
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
    // several ranks in one file, or one job's files: the job's root cause comes after them
    boolean jobLevel = oneJob || JobVerdicts.severalRanks(list);
    for (Incident i : list) {
      out.println();
      String tag =
          !i.root()
              ? style("2", "consequence")
              : jobLevel ? style("1", "first in its stream") : style("1;31", "ROOT CAUSE");
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
      if (i.root() && !jobLevel) {
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
  public void job(String name, Culprit c, int incidents) {
    out.println(style("1", "job " + name) + ": " + incidents + " incidents, one root cause");
    out.println();
    out.println(
        "  "
            + style("1;31", "ROOT CAUSE")
            + "  "
            + style("1", c.root().incidentClass())
            + "  "
            + c.headline());
    out.println("  " + c.root().summary());
    if (!c.evidence().isEmpty()) {
      out.println("  " + style("1", "Evidence:"));
      for (String e : c.evidence()) {
        wrap("    - ", e);
      }
    }
    out.println("  " + style("1", "Next steps:"));
    for (String s : c.cause().nextSteps()) {
      wrap("    - ", s);
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
