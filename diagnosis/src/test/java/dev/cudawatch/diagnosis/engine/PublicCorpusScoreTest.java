package dev.cudawatch.diagnosis.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.WireJson;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Scores the classifier on the public corpus (real error output that users posted publicly; see
 * public/README.md) as shared/tools/score_classify.py does, prints the figures per class, and fails
 * when any figure drops below the committed baseline (public/baseline.properties). Raise the
 * baseline with {@code -Dpublic.baseline.update=true} after a reviewed improvement.
 */
class PublicCorpusScoreTest {
  private static final Path DIR =
      Path.of(System.getProperty("public.dir", "src/test/resources/public"));
  private static final Path BASELINE = DIR.resolve("baseline.properties");
  private static final Path REPORT = Path.of("target", "public-corpus.md");

  @Test
  void publicCorpusScoresAtLeastTheBaseline() throws Exception {
    CorpusScore score = CorpusScore.of(labels(), this::classify);
    String table = score.table();
    System.out.println(table);
    Files.createDirectories(REPORT.getParent());
    Files.writeString(REPORT, table);

    Properties now = score.figures();
    if (Boolean.getBoolean("public.baseline.update")) {
      // sorted and without a timestamp, so that a regenerated baseline diffs cleanly
      StringBuilder out =
          new StringBuilder(
              "# public corpus baseline: a lower figure fails PublicCorpusScoreTest\n");
      new TreeMap<>(now).forEach((k, v) -> out.append(k).append('=').append(v).append('\n'));
      Files.writeString(BASELINE, out);
      return;
    }
    Properties base = new Properties();
    try (InputStream in = Files.newInputStream(BASELINE)) {
      base.load(in);
    }
    List<String> worse = new ArrayList<>();
    for (String key : new TreeMap<>(base).keySet().stream().map(String::valueOf).toList()) {
      long want = Long.parseLong(base.getProperty(key));
      long got = Long.parseLong(now.getProperty(key, "0"));
      // false positives may only fall; every other figure may only rise
      boolean ok = key.startsWith("false_positives") ? got <= want : got >= want;
      if (!ok) {
        worse.add(key + " " + want + " -> " + got);
      }
    }
    assertEquals(List.of(), worse, "figures below the committed baseline " + BASELINE);
    assertEquals(0, score.falsePositives(), "incidents on negative excerpts");
    assertTrue(score.primaryRate() >= 0.97, "primary accuracy " + score.primaryRate());
    assertTrue(score.fieldRate() >= 0.93, "field accuracy " + score.fieldRate());
  }

  @Test
  void corpusIsLargeAndEveryExcerptHasProvenance() throws Exception {
    List<JsonNode> labels = labels();
    assertTrue(labels.size() >= 400, "excerpts: " + labels.size());
    assertTrue(
        labels.stream().filter(l -> l.get("expect").isEmpty()).count() >= 80, "negative excerpts");
    for (JsonNode l : labels) {
      String file = l.get("file").asText();
      assertTrue(Files.isRegularFile(DIR.resolve(file)), file + " is missing");
      assertTrue(l.path("url").asText().startsWith("https://"), file + " has no source url");
    }
    try (var s = Files.list(DIR)) {
      long logs = s.filter(p -> p.toString().endsWith(".log")).count();
      assertEquals(labels.size(), logs, "every excerpt has one label line");
    }
  }

  private List<Incident> classify(String file) {
    try {
      List<Incident> incidents = GoldenTest.classify(DIR.resolve(file), file);
      // the corpus reaches signatures the golden cases do not: their fields must be declared too
      GoldenTest.assertDeclaredFields(file, incidents);
      return incidents;
    } catch (IOException e) {
      throw new AssertionError(file + ": " + e.getMessage(), e);
    }
  }

  private static List<JsonNode> labels() throws IOException {
    List<JsonNode> out = new ArrayList<>();
    for (String line : Files.readAllLines(DIR.resolve("labels.jsonl"))) {
      if (!line.isBlank()) {
        out.add(WireJson.mapper().readTree(line));
      }
    }
    assertFalse(out.isEmpty(), "no labels");
    return out;
  }

  /** Per-class tallies; a label's class is the class of its first expected incident. */
  static final class Tally {
    long excerpts;
    long primaryOk;
    long fieldsOk;
    long fieldsAll;
    long falsePositives;
  }

  /** What score_classify.py computes, kept per class. */
  static final class CorpusScore {
    final Map<String, Tally> byClass = new TreeMap<>();
    long excerpts;
    long primaryOk;
    long fieldsOk;
    long fieldsAll;
    long falsePositives;
    final List<String> misses = new ArrayList<>();

    interface Classifier {
      List<Incident> classify(String file);
    }

    static CorpusScore of(List<JsonNode> labels, Classifier classifier) {
      CorpusScore s = new CorpusScore();
      for (JsonNode l : labels) {
        s.add(l, classifier.classify(l.get("file").asText()));
      }
      return s;
    }

    private void add(JsonNode label, List<Incident> incidents) {
      String file = label.get("file").asText();
      JsonNode expect = label.get("expect");
      List<Incident> roots = incidents.stream().filter(Incident::root).toList();
      String want = expect.isEmpty() ? "none" : expect.get(0).get("class").asText();
      String got = roots.isEmpty() ? "none" : roots.get(0).incidentClass();
      Tally t = byClass.computeIfAbsent(want, k -> new Tally());
      excerpts++;
      t.excerpts++;
      if (expect.isEmpty()) {
        for (Incident i : incidents) {
          falsePositives++;
          byClass.computeIfAbsent(i.incidentClass(), k -> new Tally()).falsePositives++;
        }
        if (incidents.isEmpty()) {
          primaryOk++;
          t.primaryOk++;
        } else {
          misses.add(file + ": want none, got " + got);
        }
        return;
      }
      if (want.equals(got)) {
        primaryOk++;
        t.primaryOk++;
      } else {
        misses.add(file + ": want " + want + ", got " + got);
        if (!roots.isEmpty()) {
          byClass.computeIfAbsent(got, k -> new Tally()).falsePositives++;
        }
      }
      for (JsonNode e : expect) {
        Incident match = matching(roots, e);
        var fields = e.get("fields").properties().iterator();
        while (fields.hasNext()) {
          var f = fields.next();
          fieldsAll++;
          t.fieldsAll++;
          if (match != null && close(match.fields().get(f.getKey()), f.getValue())) {
            fieldsOk++;
            t.fieldsOk++;
          } else {
            misses.add(file + ": field " + f.getKey() + " want " + f.getValue());
          }
        }
      }
    }

    private static Incident matching(List<Incident> roots, JsonNode e) {
      for (Incident r : roots) {
        if (!r.incidentClass().equals(e.get("class").asText())) {
          continue;
        }
        JsonNode xid = e.get("fields").get("xid");
        if (xid == null
            || (r.fields().get("xid") instanceof Number n && n.longValue() == xid.asLong())) {
          return r;
        }
      }
      return null;
    }

    /** Numbers within 1 % (or 0.006 GiB for sizes over 1 GiB); text equal ignoring case. */
    static boolean close(Object got, JsonNode want) {
      if (got == null) {
        return false;
      }
      if (want.isNumber() && got instanceof Number g) {
        double w = want.asDouble();
        double tol =
            Math.max(0.01 * Math.abs(w), Math.abs(w) > (1L << 30) ? 0.006 * (1L << 30) : 1);
        return Math.abs(g.doubleValue() - w) <= tol;
      }
      String a = String.valueOf(got).strip().toLowerCase(java.util.Locale.ROOT);
      String b = want.asText().strip().toLowerCase(java.util.Locale.ROOT);
      return a.equals(b) || a.contains(b);
    }

    double primaryRate() {
      return excerpts == 0 ? 1 : (double) primaryOk / excerpts;
    }

    double fieldRate() {
      return fieldsAll == 0 ? 1 : (double) fieldsOk / fieldsAll;
    }

    long falsePositives() {
      return falsePositives;
    }

    Properties figures() {
      Properties p = new Properties();
      p.setProperty("excerpts", String.valueOf(excerpts));
      p.setProperty("primary_ok", String.valueOf(primaryOk));
      p.setProperty("fields_ok", String.valueOf(fieldsOk));
      p.setProperty("false_positives", String.valueOf(falsePositives));
      byClass.forEach(
          (cls, t) -> {
            if (t.excerpts > 0) {
              p.setProperty("primary_ok." + cls, String.valueOf(t.primaryOk));
              p.setProperty("fields_ok." + cls, String.valueOf(t.fieldsOk));
            }
            p.setProperty("false_positives." + cls, String.valueOf(t.falsePositives));
          });
      return p;
    }

    String table() {
      StringBuilder sb = new StringBuilder();
      sb.append(
          String.format(
              java.util.Locale.ROOT,
              "Public corpus: %d excerpts, primary class %d/%d (%.1f %%), fields %d/%d (%.1f %%),"
                  + " false-positive incidents %d%n%n",
              excerpts,
              primaryOk,
              excerpts,
              100 * primaryRate(),
              fieldsOk,
              fieldsAll,
              100 * fieldRate(),
              falsePositives));
      sb.append("| class | excerpts | primary class | fields | false positives |\n");
      sb.append("|---|---:|---:|---:|---:|\n");
      byClass.forEach(
          (cls, t) ->
              sb.append(
                  String.format(
                      java.util.Locale.ROOT,
                      "| %s | %d | %s | %s | %d |%n",
                      cls,
                      t.excerpts,
                      t.excerpts == 0 ? "-" : t.primaryOk + "/" + t.excerpts,
                      t.fieldsAll == 0 ? "-" : t.fieldsOk + "/" + t.fieldsAll,
                      t.falsePositives)));
      if (!misses.isEmpty()) {
        sb.append("\nMisses:\n");
        misses.forEach(m -> sb.append("- ").append(m).append('\n'));
      }
      return sb.toString();
    }
  }
}
