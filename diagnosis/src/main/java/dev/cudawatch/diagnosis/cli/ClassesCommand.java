package dev.cudawatch.diagnosis.cli;

import dev.cudawatch.common.cli.Cli;
import dev.cudawatch.common.cli.LogOptions;
import dev.cudawatch.diagnosis.taxonomy.Taxonomy;
import dev.cudawatch.diagnosis.taxonomy.TaxonomyDoc;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code cudawatch classes}: the taxonomy's classes (and Xid verdicts), from taxonomy.yaml. */
@Command(
    name = "classes",
    description = {
      "List the incident classes: id, default severity and suspect, title.",
      "With --xids, NVIDIA's Xid catalog with the verdict of each code. docs/taxonomy.md has the"
          + " advice."
    })
public final class ClassesCommand implements Callable<Integer> {
  @CommandLine.Mixin LogOptions logOptions;

  @Option(
      names = "--xids",
      description = "list the Xid catalog instead: code, verdict, severity, meaning")
  boolean xids;

  private final PrintStream out;

  public ClassesCommand() {
    this(System.out);
  }

  ClassesCommand(PrintStream out) {
    this.out = out;
  }

  public static void main(String[] args) {
    PrintStream out =
        new PrintStream(
            new java.io.FileOutputStream(java.io.FileDescriptor.out),
            false,
            StandardCharsets.UTF_8);
    int code = Cli.commandLine(new ClassesCommand(out)).execute(args);
    out.flush();
    System.exit(code);
  }

  @Override
  public Integer call() {
    Taxonomy t = Taxonomy.builtIn();
    (xids ? TaxonomyDoc.xidLines(t) : TaxonomyDoc.classLines(t)).forEach(out::println);
    out.flush();
    return 0;
  }
}
