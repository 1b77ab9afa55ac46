package dev.cudawatch.bench;

import dev.cudawatch.diagnosis.catalog.Catalog;
import dev.cudawatch.diagnosis.catalog.Signature;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.Locale;
import java.util.Set;

/**
 * Helpers for bench/run: {@code generate FILE LINES} writes the benchmark's training log; {@code
 * keywords FILE} writes the catalog's literal keywords, one per line, for ripgrep; {@code patterns
 * FILE} its match regexes.
 */
public final class BenchTools {
  private BenchTools() {}

  public static void main(String[] args) throws IOException {
    switch (args.length > 0 ? args[0] : "") {
      case "generate" ->
          Files.writeString(
              Path.of(args[1]),
              String.join("\n", TrainingLogGenerator.lines(Integer.parseInt(args[2]), 1000, 42))
                  + "\n",
              StandardCharsets.UTF_8);
      case "keywords" -> {
        Set<String> kws = new LinkedHashSet<>();
        for (Signature s : Catalog.builtIn().signatures()) {
          for (String k : s.keywords()) {
            if (!k.startsWith("@")) {
              kws.add(k.toLowerCase(Locale.ROOT));
            }
          }
        }
        Catalog.builtIn().cudaErrors().all().stream()
            .filter(e -> e.distinctive())
            .forEach(e -> kws.add(e.text().toLowerCase(Locale.ROOT)));
        Files.writeString(Path.of(args[1]), String.join("\n", kws) + "\n", StandardCharsets.UTF_8);
      }
      case "patterns" -> {
        // the catalog's match regexes, one per line, for rg -f (RE2 and Rust's regex agree);
        // unnamed groups, since rg joins them into one regex where names must be unique
        Set<String> ps = new LinkedHashSet<>();
        for (Signature s : Catalog.builtIn().signatures()) {
          for (String p : s.matchPatterns()) {
            ps.add(p.replaceAll("\\(\\?P<\\w+>", "(?:"));
          }
        }
        Files.writeString(Path.of(args[1]), String.join("\n", ps) + "\n", StandardCharsets.UTF_8);
      }
      default -> {
        System.err.println("usage: BenchTools generate FILE LINES | keywords FILE | patterns FILE");
        System.exit(2);
      }
    }
  }
}
