package dev.cudawatch.diagnosis.cli;

import dev.cudawatch.common.cli.Cli;
import dev.cudawatch.common.cli.LogOptions;
import dev.cudawatch.diagnosis.offline.CatalogTests;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code cudawatch catalog test FILE...}: runs a user catalog's embedded test cases. */
@Command(
    name = "catalog",
    description = "Work with signature catalogs.",
    subcommands = CatalogCommand.Test.class)
public final class CatalogCommand implements Callable<Integer> {
  @CommandLine.Mixin LogOptions logOptions;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  public static void main(String[] args) {
    Cli.main(new CatalogCommand(), args);
  }

  @Override
  public Integer call() {
    throw new CommandLine.ParameterException(spec.commandLine(), "missing subcommand: test");
  }

  /** Runs the {@code tests:} cases of each catalog, as {@code promtool test rules} does. */
  @Command(
      name = "test",
      description = {
        "Run the test cases of catalog files (their tests: section): each case's input lines are",
        "classified with the built-in catalog plus the file, and the incidents must be those",
        "expected, in order (class; optional fields, severity, root)."
      },
      exitCodeListHeading = "%nExit status:%n",
      exitCodeList = {"0:every case passed", "1:a case failed", "2:a catalog could not be loaded"})
  static final class Test implements Callable<Integer> {
    @CommandLine.Mixin LogOptions logOptions;

    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Parameters(paramLabel = "FILE", arity = "1..*", description = "catalog YAML files")
    List<Path> files = new ArrayList<>();

    @Override
    public Integer call() {
      PrintWriter out = spec.commandLine().getOut();
      int passed = 0;
      int failed = 0;
      for (Path f : files) {
        List<CatalogTests.Result> results = CatalogTests.run(f, Clock.systemUTC());
        if (results.isEmpty()) {
          out.println(f + ": no test cases (add a tests: section)");
          failed++;
        }
        for (CatalogTests.Result r : results) {
          if (r.passed()) {
            passed++;
            out.println("PASS  " + r.origin() + ": " + r.name());
          } else {
            failed++;
            out.println("FAIL  " + r.origin() + ": " + r.name());
            r.failures().forEach(why -> out.println("        " + why));
          }
        }
      }
      out.println(passed + " passed, " + failed + " failed");
      out.flush();
      return failed == 0 ? 0 : 1;
    }
  }
}
