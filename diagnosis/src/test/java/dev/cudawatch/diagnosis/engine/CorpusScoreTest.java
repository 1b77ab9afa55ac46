package dev.cudawatch.diagnosis.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.WireJson;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The shared real corpus, scored as shared/tools/score_classify.py does: every label must hold. */
class CorpusScoreTest {
  private static final Path LABELS =
      Path.of(System.getProperty("corpus.labels", "src/test/resources/corpus-labels/labels.jsonl"));
  private static final Path DIR =
      Path.of(System.getProperty("golden.dir", "src/test/resources/golden"));

  @Test
  void everyLabelledFileGivesItsRootCauseAndFields() throws Exception {
    List<String> labels = Files.readAllLines(LABELS);
    assertFalse(labels.isEmpty());
    for (String l : labels) {
      if (l.isBlank()) {
        continue;
      }
      JsonNode label = WireJson.mapper().readTree(l);
      String file = label.get("file").asText();
      List<Incident> incidents = GoldenTest.classify(DIR.resolve(file), file);
      List<Incident> roots = incidents.stream().filter(Incident::root).toList();
      JsonNode expect = label.get("expect");
      if (expect.isEmpty()) {
        assertEquals(List.of(), incidents, file + " must produce no incident");
        continue;
      }
      assertFalse(roots.isEmpty(), file + ": no root incident");
      assertEquals(
          expect.get(0).get("class").asText(), roots.get(0).incidentClass(), file + ": first root");
      for (JsonNode e : expect) {
        Incident match =
            roots.stream()
                .filter(r -> r.incidentClass().equals(e.get("class").asText()))
                .filter(
                    r ->
                        !e.get("fields").has("xid")
                            || e.get("fields").get("xid").asLong()
                                == ((Number) r.fields().get("xid")).longValue())
                .findFirst()
                .orElseThrow(() -> new AssertionError(file + ": no root of " + e));
        e.get("fields")
            .properties()
            .forEach(f -> assertClose(file, f.getKey(), f.getValue(), match.fields()));
      }
    }
  }

  private static void assertClose(String file, String key, JsonNode want, Map<String, Object> got) {
    Object v = got.get(key);
    assertTrue(v != null, file + ": field " + key + " missing in " + got);
    if (want.isNumber()) {
      double w = want.asDouble();
      double g = ((Number) v).doubleValue();
      double tol = Math.max(0.01 * Math.abs(w), Math.abs(w) > (1L << 30) ? 0.006 * (1L << 30) : 1);
      assertTrue(Math.abs(g - w) <= tol, file + ": " + key + " want " + w + " got " + g);
    } else {
      assertEquals(want.asText().toLowerCase(), String.valueOf(v).toLowerCase(), file + ": " + key);
    }
  }
}
