package dev.cudawatch.diagnosis.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.text.TrainingOutput;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.diagnosis.advice.Advisor;
import dev.cudawatch.diagnosis.catalog.Catalog;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The healthy output that warms the agent and the job at start-up is healthy to the classifier: no
 * incident, so a warm-up never has anything to drop but its own work.
 */
class TrainingOutputTest {
  @Test
  void fortyThousandLinesOfWarmUpOutputAreNoIncident() {
    StreamClassifier c = classifier();
    Instant t = Instant.parse("2026-01-01T00:00:00Z");
    List<Incident> out = new ArrayList<>();
    Set<String> shapes = new HashSet<>();
    for (int i = 0; i < 40_000; i++) {
      String line = TrainingOutput.line(i);
      shapes.add(line.replaceAll("[0-9.e+-]+", "#"));
      out.addAll(c.accept(line, new LineMeta("r" + i, t, null, null), t));
    }
    out.addAll(c.flush(t));
    assertEquals(List.of(), out);
    assertEquals(4, shapes.stream().map(s -> s.substring(0, 6)).distinct().count(), "four shapes");
  }

  /** The warm-up's failing lines build incidents, so it compiles the incident's paths too. */
  @Test
  void theWarmUpsFailureLinesAreIncidentsOfSeveralClasses() {
    StreamClassifier c = classifier();
    Instant t = Instant.parse("2026-01-01T00:00:00Z");
    List<Incident> out = new ArrayList<>();
    for (String line : Warmup.failureLines()) {
      out.addAll(c.accept(line, new LineMeta("w", t, null, null), t));
    }
    out.addAll(c.flush(t));
    assertTrue(
        out.stream().map(Incident::incidentClass).distinct().count() >= 2,
        "incidents of the warm-up's failures: " + out);
  }

  private static StreamClassifier classifier() {
    Catalog catalog = Catalog.builtIn();
    return new StreamClassifier(
        catalog,
        new Advisor(catalog.taxonomy()),
        new StreamContext("node-1", null, "/logs/warmup.log"),
        ClassifierSettings.defaults(),
        new StreamState());
  }
}
