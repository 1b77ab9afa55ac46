package dev.cudawatch.diagnosis.offline;

import com.fasterxml.jackson.annotation.JsonProperty;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.diagnosis.catalog.Catalog;
import dev.cudawatch.diagnosis.catalog.CatalogLoader;
import dev.cudawatch.diagnosis.datafile.CatalogException;
import dev.cudawatch.diagnosis.datafile.StrictYaml;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A catalog's embedded test cases (its {@code tests:} section), run as {@code promtool test rules}
 * runs a rule file's: each case's input lines go through the classifier with the built-in catalog
 * plus this one, and the incidents found must be those expected, in order.
 *
 * <pre>
 * tests:
 *   - name: our allocator's OOM
 *     input: |
 *       step 12 loss 0.3
 *       MyAlloc: out of device memory on GPU 3 (wanted 2048 MiB)
 *     expect:
 *       - class: cuda_oom
 *         fields: {gpu: "3"}
 *   - name: a healthy log
 *     input: "epoch 1 done"
 *     expect: []
 * </pre>
 */
public final class CatalogTests {
  /** One expected incident: its class, and fields it must carry (values compared as text). */
  public record Expected(
      @JsonProperty("class") String incidentClass,
      Map<String, String> fields,
      String severity,
      Boolean root) {
    public Expected {
      fields = fields == null ? Map.of() : Map.copyOf(fields);
    }
  }

  /** A test case: a name, the input text and the incidents expected from it. */
  public record Case(String name, String input, List<Expected> expect) {
    public Case {
      expect = expect == null ? List.of() : List.copyOf(expect);
    }
  }

  /** The outcome of one case: passed, or the reasons it did not. */
  public record Result(String name, String origin, List<String> failures) {
    public boolean passed() {
      return failures.isEmpty();
    }
  }

  private CatalogTests() {}

  /** The {@code tests:} cases of a catalog file, each with its {@code file:line}. */
  public static List<StrictYaml.Located<Case>> read(Path file) {
    byte[] text;
    try {
      text = Files.readAllBytes(file);
    } catch (IOException e) {
      throw new CatalogException(file + ": cannot read: " + e.getMessage(), e);
    }
    List<StrictYaml.Located<Case>> cases = new ArrayList<>();
    Map<String, StrictYaml.Section> sections = new LinkedHashMap<>();
    for (String other : CatalogLoader.SECTIONS) {
      sections.put(other, (p, t) -> p.skipChildren());
    }
    sections.put(
        "tests", (p, t) -> StrictYaml.readList(p, t, file.toString(), "tests", Case.class, cases));
    try (InputStream in = new ByteArrayInputStream(text)) {
      StrictYaml.read(in, file.toString(), sections);
    } catch (IOException e) {
      throw new CatalogException(file + ": cannot read: " + e.getMessage(), e);
    }
    for (var c : cases) {
      if (c.value().name() == null || c.value().input() == null) {
        throw new CatalogException(c.origin() + ": a test case needs a name and an input");
      }
      for (Expected e : c.value().expect()) {
        if (e.incidentClass() == null) {
          throw new CatalogException(
              c.origin()
                  + ": test '"
                  + c.value().name()
                  + "': every expected incident needs a class");
        }
      }
    }
    return cases;
  }

  /** Loads the catalog (built-in plus {@code file}) and runs every case of {@code file}. */
  public static List<Result> run(Path file, Clock clock) {
    List<StrictYaml.Located<Case>> cases = read(file);
    Catalog catalog = Catalog.load(List.of(file));
    List<Result> results = new ArrayList<>();
    for (var located : cases) {
      Case c = located.value();
      List<Incident> found;
      try {
        found =
            new OfflineClassifier(catalog, clock)
                .classify(
                    new ByteArrayInputStream(c.input().getBytes(StandardCharsets.UTF_8)),
                    c.name(),
                    n -> {});
      } catch (IOException e) {
        throw new IllegalStateException("reading a test input from memory", e);
      }
      results.add(new Result(c.name(), located.origin(), compare(c.expect(), found)));
    }
    return results;
  }

  static List<String> compare(List<Expected> expected, List<Incident> found) {
    List<String> failures = new ArrayList<>();
    for (int i = 0; i < Math.max(expected.size(), found.size()); i++) {
      final int n = i + 1;
      Incident got = i < found.size() ? found.get(i) : null;
      Expected want = i < expected.size() ? expected.get(i) : null;
      if (want == null) {
        failures.add(
            "unexpected incident #"
                + (i + 1)
                + ": "
                + got.incidentClass()
                + " at line "
                + got.line());
        continue;
      }
      if (got == null) {
        failures.add("expected incident #" + (i + 1) + " " + want.incidentClass() + ": not found");
        continue;
      }
      if (!want.incidentClass().equals(got.incidentClass())) {
        failures.add(
            "incident #"
                + (i + 1)
                + ": class "
                + got.incidentClass()
                + ", expected "
                + want.incidentClass());
        continue;
      }
      if (want.severity() != null && !want.severity().equals(got.severity())) {
        failures.add(
            "incident #"
                + (i + 1)
                + ": severity "
                + got.severity()
                + ", expected "
                + want.severity());
      }
      if (want.root() != null && want.root() != got.root()) {
        failures.add("incident #" + (i + 1) + ": root " + got.root() + ", expected " + want.root());
      }
      want.fields()
          .forEach(
              (k, v) -> {
                Object actual = got.fields().get(k);
                if (!Objects.equals(v, actual == null ? null : String.valueOf(actual))) {
                  failures.add(
                      "incident #"
                          + n
                          + ": field "
                          + k
                          + " = "
                          + (actual == null ? "(absent)" : "'" + actual + "'")
                          + ", expected '"
                          + v
                          + "'");
                }
              });
    }
    return failures;
  }
}
