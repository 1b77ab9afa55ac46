package dev.cudawatch.it.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every relative link of README.md, CONTRIBUTING.md, docs/ and bench/ leads to a file or directory
 * of the repository, and every anchor it names to a heading (or an explicit {@code <a id>}) of the
 * document it points at, so moving a section between documents cannot leave a link behind. The
 * README stays a front door: at most {@value #README_MAX_LINES} lines.
 */
class DocLinksTest {
  static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  static final int README_MAX_LINES = 250;
  private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");
  private static final Pattern HEADING = Pattern.compile("(?m)^#{1,6}\\s+(.+?)\\s*#*$");
  private static final Pattern EXPLICIT_ANCHOR = Pattern.compile("<a (?:id|name)=\"([^\"]+)\"");

  /** A repository file named in a code span, e.g. `bench/results/agent.md`, must exist too. */
  private static final Pattern NAMED =
      Pattern.compile("`((?:bench|docs|deploy|samples)/[\\w./-]+\\.(?:md|ya?ml|png|sh))`");

  private final Map<Path, Set<String>> anchorsByDoc = new HashMap<>();

  @Test
  void everyRelativeLinkResolves() throws IOException {
    List<Path> docs = docs();
    List<String> dead = new ArrayList<>();
    for (Path doc : docs) {
      Matcher m = LINK.matcher(Files.readString(doc));
      while (m.find()) {
        String target = m.group(1);
        if (target.matches("^[a-z]+:.*")) {
          continue; // web links
        }
        int hash = target.indexOf('#');
        String file = hash < 0 ? target : target.substring(0, hash);
        Path resolved = file.isEmpty() ? doc : doc.getParent().resolve(file).normalize();
        if (!Files.exists(resolved)) {
          dead.add(ROOT.relativize(doc) + ": " + target);
        } else if (hash >= 0 && resolved.toString().endsWith(".md")) {
          String anchor = target.substring(hash + 1);
          if (!anchors(resolved).contains(anchor)) {
            dead.add(ROOT.relativize(doc) + ": " + target + " (no such heading)");
          }
        }
      }
    }
    for (Path doc : docs) {
      Matcher m = NAMED.matcher(Files.readString(doc));
      while (m.find()) {
        if (!Files.exists(ROOT.resolve(m.group(1)))) {
          dead.add(ROOT.relativize(doc) + ": `" + m.group(1) + "`");
        }
      }
    }
    assertEquals(List.of(), dead, "dead relative links");
  }

  @Test
  void coversTheManualTheTestGuideAndTheBenchmarks() throws IOException {
    List<Path> docs = docs();
    for (String must :
        List.of(
            "README.md",
            "CONTRIBUTING.md",
            "bench/README.md",
            "docs/design.md",
            "docs/agent.md",
            "docs/rules.md",
            "docs/alerts.md",
            "docs/deployment.md",
            "docs/upgrading.md",
            "docs/commands.md",
            "docs/install.md")) {
      assertTrue(docs.contains(ROOT.resolve(must)), must + " is checked");
    }
  }

  @Test
  void readmeIsAFrontDoor() throws IOException {
    List<String> lines = Files.readAllLines(ROOT.resolve("README.md"));
    assertTrue(
        lines.size() <= README_MAX_LINES,
        "README.md has " + lines.size() + " lines; the manual belongs in docs/");
    // every document of docs/ is reachable from the README's index
    String readme = String.join("\n", lines);
    try (Stream<Path> s = Files.list(ROOT.resolve("docs"))) {
      for (Path doc : s.filter(p -> p.toString().endsWith(".md")).toList()) {
        String link = "](docs/" + doc.getFileName() + ")";
        assertTrue(readme.contains(link), "README.md does not link " + link);
      }
    }
  }

  private static List<Path> docs() throws IOException {
    List<Path> docs = new ArrayList<>();
    docs.add(ROOT.resolve("README.md"));
    docs.add(ROOT.resolve("CONTRIBUTING.md"));
    for (String dir : List.of("docs", "bench")) {
      try (Stream<Path> s = Files.walk(ROOT.resolve(dir))) {
        s.filter(p -> p.toString().endsWith(".md"))
            .filter(p -> !ROOT.relativize(p).toString().contains("target"))
            .filter(p -> !ROOT.relativize(p).toString().contains("node_modules"))
            .sorted()
            .forEach(docs::add);
      }
    }
    return docs;
  }

  /** The anchors GitHub gives a document's headings, plus its explicit ones. */
  private Set<String> anchors(Path doc) throws IOException {
    Set<String> cached = anchorsByDoc.get(doc);
    if (cached != null) {
      return cached;
    }
    String text = Files.readString(doc).replaceAll("(?ms)^```.*?^```", "");
    Set<String> anchors = new HashSet<>();
    Map<String, Integer> seen = new HashMap<>();
    Matcher h = HEADING.matcher(text);
    while (h.find()) {
      String slug = slug(h.group(1));
      int n = seen.merge(slug, 1, Integer::sum);
      anchors.add(n == 1 ? slug : slug + "-" + (n - 1));
    }
    Matcher a = EXPLICIT_ANCHOR.matcher(text);
    while (a.find()) {
      anchors.add(a.group(1));
    }
    anchorsByDoc.put(doc, anchors);
    return anchors;
  }

  /** GitHub's heading anchor: lower case, markup and punctuation dropped, spaces to hyphens. */
  static String slug(String heading) {
    String text = heading.replaceAll("\\]\\([^)]*\\)", "]"); // a link's text, not its target
    return text.toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-');
  }
}
