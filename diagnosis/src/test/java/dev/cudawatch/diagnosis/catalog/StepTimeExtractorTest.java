package dev.cudawatch.diagnosis.catalog;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.diagnosis.datafile.CatalogException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.Stream;
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

  /**
   * The reading without a field map (a group read by number, the exclude patterns before the
   * groups) gives, bit for bit, what {@link Signature#match}'s fields gave, on every line of the
   * test logs and the shared corpus and on generated progress lines in every form the patterns know
   * (it/s, s/it, ?it/s, validation bars, redrawn bars, Megatron, DeepSpeed) and some they do not;
   * and with a site's patterns that set several groups, optional ones and extract patterns.
   */
  @Test
  void readingOneGroupGivesWhatTheFieldMapGave() throws Exception {
    List<String> lines = new ArrayList<>(generatedProgressLines(20_000));
    for (Path root : List.of(Path.of("src/test/resources"), Path.of("../../shared/corpus"))) {
      if (!Files.isDirectory(root)) {
        continue;
      }
      try (Stream<Path> files = Files.walk(root)) {
        for (Path f : files.filter(Files::isRegularFile).toList()) {
          String text = new String(Files.readAllBytes(f), StandardCharsets.ISO_8859_1);
          lines.addAll(text.lines().toList());
        }
      }
    }
    String site =
        """
        version: 1
        step_times:
          - id: two_groups
            keywords: ["step took"]
            match:
              - 'step took (?:(?P<ms_per_step>[0-9.]*)ms)? *(?:or (?P<seconds_per_step>[0-9.]+)s)?'
            exclude:
              - 'warmup'
          - id: with_extract
            keywords: ["throughput"]
            match:
              - 'throughput(?: (?P<samples_per_second>[0-9.]+))?'
            extract:
              - 'rate=(?P<steps_per_second>[0-9.]+)'
        """;
    List<String> siteLines =
        List.of(
            "step took 120ms",
            "step took ms or 0.5s",
            "step took  or 2s",
            "step took 1.2.3ms",
            "warmup step took 120ms",
            "step took 0ms",
            "throughput 12.5",
            "throughput rate=4",
            "throughput",
            "Throughput 7 rate=2");
    StepTimeExtractor withSite =
        new CatalogLoader()
            .loadTexts(Map.of("site.yaml", site.getBytes(StandardCharsets.UTF_8)))
            .stepTimes();
    int stated = 0;
    for (String line : lines) {
      assertSameReading(BUILT_IN, line);
      stated += Double.isNaN(BUILT_IN.secondsPerStep(line)) ? 0 : 1;
    }
    for (String line : siteLines) {
      assertSameReading(withSite, line);
    }
    assertTrue(lines.size() > 20_000 && stated > 5_000, lines.size() + " lines, " + stated);
  }

  private static void assertSameReading(StepTimeExtractor x, String line) {
    double want = fieldMapReading(x, line);
    double got = x.secondsPerStep(line);
    assertEquals(Double.doubleToLongBits(want), Double.doubleToLongBits(got), line);
  }

  /** The reading before it took one group by number: each signature's field map. */
  private static double fieldMapReading(StepTimeExtractor x, String line) {
    int cr = line.lastIndexOf('\r', line.length() - 2);
    String text = cr >= 0 ? line.substring(cr + 1) : line;
    long[] mask = new long[x.keywords().maskWords()];
    if (!x.keywords().scan(text, mask)) {
      return Double.NaN;
    }
    for (int w = 0; w < mask.length; w++) {
      long bits = mask[w];
      while (bits != 0) {
        int i = (w << 6) + Long.numberOfTrailingZeros(bits);
        bits &= bits - 1;
        Map<String, String> f = x.signatures().get(i).match(text);
        if (f != null) {
          double s = Double.NaN;
          try {
            if (f.containsKey("seconds_per_step")) {
              s = Double.parseDouble(f.get("seconds_per_step"));
            } else if (f.containsKey("ms_per_step")) {
              s = Double.parseDouble(f.get("ms_per_step")) / 1000.0;
            } else if (f.containsKey("steps_per_second")) {
              s = 1.0 / Double.parseDouble(f.get("steps_per_second"));
            } else if (f.containsKey("samples_per_second")) {
              s = 1.0 / Double.parseDouble(f.get("samples_per_second"));
            }
          } catch (NumberFormatException e) {
            s = Double.NaN;
          }
          if (s > 0 && Double.isFinite(s)) {
            return s;
          }
        }
      }
    }
    return Double.NaN;
  }

  /** Progress lines in the forms trainers print, seeded; some malformed on purpose. */
  private static List<String> generatedProgressLines(int n) {
    SplittableRandom r = new SplittableRandom(35);
    String[] prefixes = {
      "", "Epoch 0: ", "epoch 3:  ", "Validation: ", "Validation DataLoader 0: ",
          "Sanity Checking: ",
      "  Testing: ", "Evaluating: ", "Training: ", "Predicting ", "100%", "[rank0]: "
    };
    List<String> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      int pct = r.nextInt(101);
      String bar = "#".repeat(pct / 10) + " ".repeat(10 - pct / 10);
      String elapsed = String.format(Locale.ROOT, "%02d:%02d", r.nextInt(60), r.nextInt(60));
      String left =
          r.nextInt(8) == 0
              ? "?"
              : String.format(Locale.ROOT, "%02d:%02d", r.nextInt(60), r.nextInt(60));
      String rate =
          switch (r.nextInt(8)) {
            case 0 -> "?";
            case 1 -> Integer.toString(r.nextInt(1000));
            case 2 -> String.format(Locale.ROOT, "%.1f", r.nextDouble() * 100);
            case 3 -> "0.00";
            case 4 -> String.format(Locale.ROOT, "%.2e", r.nextDouble());
            default -> String.format(Locale.ROOT, "%.2f", r.nextDouble() * 50);
          };
      String unit = r.nextBoolean() ? "it/s" : "s/it";
      String tail =
          r.nextBoolean() ? "]" : ", loss=" + r.nextDouble() + ", v_num=" + r.nextInt(100) + "]";
      String sep = r.nextInt(10) == 0 ? "," : ", " + " ".repeat(r.nextInt(3));
      String line =
          prefixes[r.nextInt(prefixes.length)]
              + pct
              + "%|"
              + bar
              + "| "
              + r.nextInt(5000)
              + "/5000 ["
              + elapsed
              + (r.nextInt(5) == 0 ? "" : "<" + left)
              + sep
              + rate
              + unit
              + (r.nextInt(10) == 0 ? "x" : "")
              + tail;
      switch (r.nextInt(12)) {
        case 0 -> line = line + "\r" + line.replace("it/s", "s/it");
        case 1 -> line = "  1%|  | 1/9 [00:01<00:09,  1.00it/s]\r" + line + "\r";
        case 2 ->
            line =
                String.format(
                    Locale.ROOT,
                    " iteration %8d/  250000 | consumed samples: %d | elapsed time per iteration (ms): %s | lr: 3.0E-04 |",
                    r.nextInt(250_000),
                    r.nextInt(1_000_000),
                    r.nextInt(6) == 0
                        ? "nan"
                        : String.format(Locale.ROOT, "%.1f", r.nextDouble() * 2e5));
        case 3 ->
            line =
                String.format(
                    Locale.ROOT,
                    "[timer.py:197:stop] %d/%d, RunningAvgSamplesPerSec=%.3f, CurrSamplesPerSec=%s, MemAllocated=1.75GB",
                    r.nextInt(100),
                    r.nextInt(100),
                    r.nextDouble() * 300,
                    r.nextInt(6) == 0
                        ? "1.5e2"
                        : String.format(Locale.ROOT, "%.4f", r.nextDouble() * 300));
        case 4 ->
            line =
                String.format(
                    Locale.ROOT,
                    "[timer.py:189:stop] %d/%d, SamplesPerSec=%s, MemAllocated=0.26GB",
                    r.nextInt(100),
                    r.nextInt(100),
                    String.format(Locale.ROOT, "%.9f", r.nextDouble() * 100));
        default -> {}
      }
      out.add(line);
    }
    return out;
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
