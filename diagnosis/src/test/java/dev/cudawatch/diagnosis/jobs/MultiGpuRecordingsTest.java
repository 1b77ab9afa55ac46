package dev.cudawatch.diagnosis.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.WireJson;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Offline {@code classify --job} on every real multi-GPU recording (captured on H200s, with the
 * truth beside each): once on what a user sees (torchrun's console), once on every file of the job
 * (each rank's logs, the kernel log, the console). Each answer is right, unknown (no culprit), or
 * wrong; none may be wrong. The table lands in target/multigpu-recordings.md.
 */
class MultiGpuRecordingsTest {
  static final Path DIR = Path.of("src/test/resources/multigpu");

  record Row(String recording, String truth, String console, String all) {}

  @Test
  void everyRecordingGetsOneRootCauseAndNoneIsWrong() throws Exception {
    List<Row> rows = new ArrayList<>();
    int right = 0;
    int answers = 0;
    int unknownAllowed = 0;
    List<Path> dirs;
    try (Stream<Path> s = Files.list(DIR)) {
      dirs = s.filter(d -> Files.isRegularFile(d.resolve("truth.json"))).sorted().toList();
    }
    for (Path d : dirs) {
      List<Path> console = logs(d, "console");
      if (console.isEmpty()) {
        continue;
      }
      JsonNode truth = WireJson.mapper().readTree(d.resolve("truth.json").toFile());
      List<Long> want = new ArrayList<>();
      if (truth.path("failed").asBoolean(true)) {
        truth.path("culprit_ranks").forEach(r -> want.add(r.asLong()));
      }
      List<Path> all = new ArrayList<>(logs(d, "rank"));
      all.addAll(logs(d, "kmsg"));
      all.addAll(console);
      String[] got = new String[2];
      int k = 0;
      // a Python exception is no GPU failure: its recordings' answers may be unknown
      boolean exception = "exception".equals(truth.path("case").asText());
      for (List<Path> files : List.of(console, all)) {
        unknownAllowed += exception ? 1 : 0;
        Culprit c = verdict(files);
        String outcome = outcome(c, want);
        assertTrue(!outcome.startsWith("wrong"), d.getFileName() + " on " + files + ": " + outcome);
        right += outcome.startsWith("right") ? 1 : 0;
        answers++;
        got[k++] = outcome;
      }
      rows.add(
          new Row(
              d.getFileName().toString(),
              (want.isEmpty() ? "no failure" : "rank " + want)
                  + " ("
                  + truth.path("case").asText()
                  + ")",
              got[0],
              got[1]));
    }
    assertTrue(rows.size() >= 9, "the recordings are there: " + rows);
    StringBuilder md =
        new StringBuilder(
            "| recording | truth | console | every file of the job |\n|---|---|---|---|\n");
    for (Row r : rows) {
      md.append("| ")
          .append(r.recording())
          .append(" | ")
          .append(r.truth())
          .append(" | ")
          .append(r.console())
          .append(" | ")
          .append(r.all())
          .append(" |\n");
    }
    md.append("\nright ")
        .append(right)
        .append(" of ")
        .append(answers)
        .append(" answers, none wrong\n");
    Files.createDirectories(Path.of("target"));
    Files.writeString(Path.of("target/multigpu-recordings.md"), md);
    System.out.print(md);
    // the failures that are no GPU failure (Python exceptions, truth case "exception") are the only
    // unknowns
    assertEquals(answers - unknownAllowed, right, md.toString());
  }

  private static Culprit verdict(List<Path> files) throws Exception {
    Map<String, List<Incident>> byFile = new LinkedHashMap<>();
    for (Path f : files) {
      byFile.put(f.toString(), CulpritAnalysisTest.classify(f));
    }
    return byFile.values().stream().allMatch(List::isEmpty) ? null : JobVerdicts.ofFiles(byFile);
  }

  private static String outcome(Culprit c, List<Long> want) {
    if (want.isEmpty()) {
      return c == null ? "right: no failure" : "wrong: " + c.headline();
    }
    if (c == null || c.ranks().isEmpty()) {
      return "unknown";
    }
    return (c.ranks().equals(want) ? "right: " : "wrong: ") + c.headline();
  }

  private static List<Path> logs(Path d, String prefix) throws Exception {
    try (Stream<Path> s = Files.list(d)) {
      return s.filter(p -> p.getFileName().toString().startsWith(prefix))
          .filter(p -> p.toString().endsWith(".log"))
          .sorted()
          .toList();
    }
  }
}
