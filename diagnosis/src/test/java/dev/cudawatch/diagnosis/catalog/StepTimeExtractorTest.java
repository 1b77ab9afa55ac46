package dev.cudawatch.diagnosis.catalog;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.diagnosis.datafile.CatalogException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Step times from real progress lines (tqdm as drawn by Lightning and the Hugging Face Trainer,
 * Megatron, DeepSpeed; {@code steps/step-lines.tsv} cites each line's thread) and from a site's own
 * pattern.
 */
class StepTimeExtractorTest {
  private static final StepTimeExtractor BUILT_IN =
      new CatalogLoader().loadTexts(Map.of()).stepTimes();

  @Test
  void realProgressLines() throws Exception {
    List<String> rows = Files.readAllLines(Path.of("src/test/resources/steps/step-lines.tsv"));
    int checked = 0;
    for (String row : rows) {
      if (row.startsWith("#") || row.isBlank()) {
        continue;
      }
      String[] f = row.split("\t", 3);
      assertTrue(f[0].startsWith("https://github.com/"), "each line cites its source: " + row);
      double want = Double.parseDouble(f[1]);
      double got = BUILT_IN.secondsPerStep(f[2]);
      if (Double.isNaN(want)) {
        assertTrue(Double.isNaN(got), "no step time in: " + f[2] + " (got " + got + ")");
      } else {
        assertEquals(want, got, want * 1e-6, f[2]);
      }
      checked++;
    }
    assertEquals(10, checked);
  }

  @Test
  void aRedrawnBarCountsByItsLastDrawing() {
    String line =
        "  1%|          | 10/1000 [00:05<08:15,  2.00it/s]\r  1%|          | 11/1000 [00:06<08:10,"
            + "  0.50it/s]";
    assertEquals(2.0, BUILT_IN.secondsPerStep(line), 1e-9);
    assertTrue(Double.isNaN(BUILT_IN.secondsPerStep("loss=0.1 lr=3e-4")));
  }

  @Test
  void aSitePatternComesFirst() {
    String site =
        """
        version: 1
        step_times:
          - id: our_trainer
            keywords: [" took "]
            match:
              - 'step [0-9]+ took (?P<seconds_per_step>[0-9.]+)s'
        """;
    StepTimeExtractor s =
        new CatalogLoader()
            .loadTexts(Map.of("site.yaml", site.getBytes(StandardCharsets.UTF_8)))
            .stepTimes();
    assertEquals("our_trainer", s.ids().get(0));
    assertEquals(0.85, s.secondsPerStep("[host3] step 120 took 0.85s"), 1e-9);
    assertEquals(126.9953, s.secondsPerStep("elapsed time per iteration (ms): 126995.3 |"), 1e-9);
  }

  @Test
  void aPatternWithoutATimeGroupFailsToLoad() {
    String site =
        """
        version: 1
        step_times:
          - id: no_group
            keywords: ["step"]
            match: ['step (?P<step>[0-9]+)']
        """;
    CatalogException e =
        assertThrows(
            CatalogException.class,
            () ->
                new CatalogLoader()
                    .loadTexts(Map.of("site.yaml", site.getBytes(StandardCharsets.UTF_8))));
    assertTrue(e.getMessage().contains("site.yaml") && e.getMessage().contains("no_group"));
  }
}
