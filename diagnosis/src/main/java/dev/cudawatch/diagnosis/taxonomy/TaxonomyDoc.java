package dev.cudawatch.diagnosis.taxonomy;

import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/** docs/taxonomy.md, rendered from the taxonomy (a test keeps the checked-in file in step). */
public final class TaxonomyDoc {
  private TaxonomyDoc() {}

  public static String render(Taxonomy t) {
    StringBuilder md = new StringBuilder();
    md.append("# Incident taxonomy\n\n")
        .append(
            "<!-- Generated from diagnosis/src/main/resources/cudawatch/taxonomy.yaml: do not edit."
                + " Regenerate with ./mvnw -pl diagnosis -am verify -Dtest=TaxonomyDocTest"
                + " -Dsurefire.failIfNoSpecifiedTests=false -Dgolden.update=true -->\n\n")
        .append(
            "Every incident has one class. The class gives its default severity and suspect (a"
                + " signature or the CUDA error may state others), the summary when no signature"
                + " gives one, and the advice: an explanation and next steps, templates over the"
                + " incident's fields (`{field}`; a `[bracketed part]` disappears when a field in it"
                + " is missing), or logic over the fields in Java. `lemon GPU`: counted by the"
                + " lemon-GPU score and rule. `Xid correlation`: takes a verdict from the kernel"
                + " log's Xids on the same GPU, or is the Xid event itself. `job role`: a"
                + " `consequence` is what a rank reports when another rank failed, a failed job's"
                + " root cause only when nothing else is. `kernel log`: comes from a node's kernel"
                + " log, which names a GPU or a process, not a job; the job that held the GPU then"
                + " owns it. `bin/cudawatch classes` prints the list.\n\n");
    md.append(
            "| class | title | severity | suspect | lemon GPU | Xid correlation | job role | kernel"
                + " log | advice |\n")
        .append("|---|---|---|---|---|---|---|---|---|\n");
    for (IncidentClass c : t.classes()) {
      md.append("| [`")
          .append(c.id())
          .append("`](#")
          .append(c.id())
          .append(") | ")
          .append(cell(c.title()))
          .append(" | ")
          .append(c.severity())
          .append(" | ")
          .append(c.suspect())
          .append(" | ")
          .append(c.lemonGpu() ? "yes" : "")
          .append(" | ")
          .append(role(c.xidCorrelation()))
          .append(" | ")
          .append(c.jobRole() == JobRole.CONSEQUENCE ? "consequence" : "")
          .append(" | ")
          .append(c.kernelLog() ? "yes" : "")
          .append(" | ")
          .append(c.advice() != null ? logic(c.advice()) : "templates")
          .append(" |\n");
    }
    md.append("\nFields any incident may carry: ")
        .append(t.commonFields().stream().map(f -> "`" + f + "`").collect(Collectors.joining(", ")))
        .append(".\n");
    for (IncidentClass c : t.classes()) {
      md.append("\n## ").append(c.id()).append("\n\n").append(c.title()).append(".");
      md.append(" Severity ").append(c.severity()).append(", suspect ").append(c.suspect());
      if (c.detector() != null) {
        md.append("; produced by the ").append(c.detector().replace('_', ' ')).append(" detector");
      }
      md.append(".\n");
      if (!c.fields().isEmpty()) {
        md.append("\nFields: ")
            .append(c.fields().stream().map(f -> "`" + f + "`").collect(Collectors.joining(", ")))
            .append(".\n");
      }
      if (c.advice() != null) {
        md.append("\nAdvice computed by ")
            .append(logic(c.advice()))
            .append(" from the fields")
            .append(c.explanation() != null ? "; when it has nothing specific:" : ".")
            .append("\n");
      }
      if (c.explanation() != null) {
        md.append("\n> ").append(c.explanation()).append("\n");
      }
      if (!c.nextSteps().isEmpty()) {
        md.append("\n");
        for (String s : c.nextSteps()) {
          md.append("- ").append(s).append("\n");
        }
      }
    }
    md.append("\n## Xid catalog\n\n")
        .append(
            "NVIDIA's Xid catalog (codes 1 to 172), with the verdict the Xid correlation gives an"
                + " application incident on the same GPU: `application` (the process faulted, the"
                + " GPU is healthy), `hardware`, `driver` (driver, firmware or GSP), or"
                + " `informational` (blames nobody). The hardware outweighs the driver, which"
                + " outweighs the application. Recovery is NVIDIA's immediate resolution bucket;"
                + " \"causes later\": later Xids on the GPU are often this one's consequences.\n\n")
        .append("| Xid | mnemonic | verdict | severity | recovery | causes later | meaning |\n")
        .append("|---|---|---|---|---|---|---|\n");
    for (XidInfo x : t.xids()) {
      md.append("| ")
          .append(x.xid())
          .append(" | `")
          .append(x.mnemonic())
          .append("` | ")
          .append(x.verdict().id())
          .append(" | ")
          .append(x.severity())
          .append(" | ")
          .append(x.recovery())
          .append(" | ")
          .append(x.causesLater() ? "yes" : "")
          .append(" | ")
          .append(cell(x.meaning()))
          .append(" |\n");
    }
    md.append("\n### Recovery actions\n\n| recovery | what to do |\n|---|---|\n");
    t.recoveryActions()
        .forEach((k, v) -> md.append("| ").append(k).append(" | ").append(cell(v)).append(" |\n"));
    return md.toString();
  }

  private static String role(XidRole r) {
    return switch (r) {
      case NONE -> "";
      case GETS_VERDICT -> "gets a verdict";
      case XID -> "the Xid event";
    };
  }

  private static String logic(AdviceLogic a) {
    String name = a.name().charAt(0) + a.name().substring(1).toLowerCase(Locale.ROOT);
    return "`" + name + "Advice`";
  }

  private static String cell(String s) {
    return s.replace("|", "\\|");
  }

  /** The class list as {@code bin/cudawatch classes} prints it. */
  public static List<String> classLines(Taxonomy t) {
    int w = t.ids().stream().mapToInt(String::length).max().orElse(10);
    return t.classes().stream()
        .map(
            c ->
                String.format(
                    "%-" + w + "s  %-8s  %-14s  %s", c.id(), c.severity(), c.suspect(), c.title()))
        .toList();
  }

  /** The Xid catalog as {@code bin/cudawatch classes --xids} prints it. */
  public static List<String> xidLines(Taxonomy t) {
    return t.xids().stream()
        .map(
            x ->
                String.format(
                    "%3d  %-13s  %-8s  %s", x.xid(), x.verdict().id(), x.severity(), x.meaning()))
        .toList();
  }
}
