package dev.cudawatch.diagnosis.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.diagnosis.catalog.Catalog;
import dev.cudawatch.diagnosis.offline.OfflineClassifier;
import dev.cudawatch.diagnosis.taxonomy.IncidentClass;
import dev.cudawatch.diagnosis.taxonomy.Taxonomy;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Golden tests, as in mtail: every {@code golden/NAME.log} (or {@code .csv}) is classified and
 * compared with {@code golden/NAME.golden}, one JSON line per incident: the whole incident as a
 * person reads it (line, class, root, count, severity, suspect, fields, summary, explanation, next
 * steps), whose fields must be those taxonomy.yaml declares. Adding a case is adding a pair of
 * files. Regenerate after a reviewed change with {@code ./mvnw -pl diagnosis test -Dtest=GoldenTest
 * -Dgolden.update=true}.
 */
class GoldenTest {
  private static final Path DIR =
      Path.of(System.getProperty("golden.dir", "src/test/resources/golden"));
  private static final ObjectMapper JSON = WireJson.mapper();
  private static final Taxonomy TAXONOMY = Taxonomy.builtIn();
  private static final OfflineClassifier CLASSIFIER =
      new OfflineClassifier(
          Catalog.builtIn(), Clock.fixed(Instant.parse("2026-01-01T00:00:00Z"), ZoneOffset.UTC));

  @TestFactory
  Stream<DynamicTest> everyGoldenCase() throws IOException {
    List<Path> inputs;
    try (Stream<Path> s = Files.list(DIR)) {
      inputs =
          s.filter(p -> p.toString().endsWith(".log") || p.toString().endsWith(".csv"))
              .sorted()
              .toList();
    }
    return inputs.stream()
        .map(p -> DynamicTest.dynamicTest(p.getFileName().toString(), () -> check(p)));
  }

  /** Every field of every incident is a common field or one its class declares. */
  static void assertDeclaredFields(String name, List<Incident> incidents) {
    for (Incident i : incidents) {
      IncidentClass c = TAXONOMY.get(i.incidentClass());
      for (String f : i.fields().keySet()) {
        assertTrue(
            TAXONOMY.commonFields().contains(f) || c.fields().contains(f),
            name + ": field '" + f + "' of " + c.id() + " is not declared in taxonomy.yaml");
      }
    }
  }

  private static void check(Path input) throws IOException {
    String name = input.getFileName().toString();
    Path golden = DIR.resolve(name.substring(0, name.lastIndexOf('.')) + ".golden");
    List<Incident> incidents = classify(input, name);
    assertDeclaredFields(name, incidents);
    String actual = render(incidents);
    if (Boolean.getBoolean("golden.update")) {
      Files.writeString(golden, actual);
      return;
    }
    String expected =
        Files.exists(golden) ? Files.readString(golden) : "(no golden file " + golden + ")";
    assertEquals(expected, actual, "incidents of " + name);
  }

  static List<Incident> classify(Path input, String source) throws IOException {
    try (InputStream in = Files.newInputStream(input)) {
      return CLASSIFIER.classify(in, source, null);
    }
  }

  static String render(List<Incident> incidents) throws IOException {
    StringBuilder sb = new StringBuilder();
    for (Incident i : incidents) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("line", i.line());
      m.put("class", i.incidentClass());
      m.put("root", i.root());
      m.put("count", i.count());
      m.put("severity", i.severity());
      m.put("suspect", i.suspect());
      m.put("fields", i.fields());
      m.put("summary", i.summary());
      m.put("explanation", i.explanation());
      m.put("next_steps", i.nextSteps());
      sb.append(JSON.writeValueAsString(m)).append('\n');
    }
    return sb.toString();
  }

  /** Lines of a resource, for tests that build inputs. */
  static List<String> lines(String resource) throws IOException {
    return new ArrayList<>(Files.readAllLines(DIR.resolve(resource), StandardCharsets.UTF_8));
  }
}
