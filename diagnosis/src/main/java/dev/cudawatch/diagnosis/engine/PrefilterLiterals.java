package dev.cudawatch.diagnosis.engine;

import dev.cudawatch.diagnosis.catalog.Catalog;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The built-in catalog's prefilter literals, listed at build time (the build runs {@link #main})
 * into a resource, so {@code classify} scans a large file while the catalog's YAML is still being
 * parsed. {@code PrefilterLiteralsTest} checks the resource against the catalog.
 */
public final class PrefilterLiterals {
  /** The resource the build writes, next to this class. */
  static final String RESOURCE = "builtin-prefilter-literals.txt";

  private PrefilterLiterals() {}

  /** The built-in catalog's literals as listed at build time, or null without the resource. */
  public static List<String> builtIn() {
    try (InputStream in = PrefilterLiterals.class.getResourceAsStream(RESOURCE)) {
      if (in == null) {
        return null; // run from classes the build did not finish: the catalog gives them
      }
      return new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8)).lines().toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Writes the built-in catalog's literals, one per line, to the file given. */
  public static void main(String[] args) throws IOException {
    Path out = Path.of(args[0]);
    Files.createDirectories(out.getParent());
    Files.write(out, LinePrefilter.literals(Catalog.builtIn()), StandardCharsets.UTF_8);
  }
}
