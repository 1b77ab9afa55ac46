package dev.cudawatch.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** Every relative link of README.md and docs/ leads to a file or directory of the repository. */
class DocLinksTest {
  static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");

  /** A repository file named in a code span, e.g. `bench/results/agent.md`, must exist too. */
  private static final Pattern NAMED =
      Pattern.compile("`((?:bench|docs|deploy|samples)/[\\w./-]+\\.(?:md|ya?ml|png|sh))`");

  @Test
  void everyRelativeLinkResolves() throws IOException {
    List<Path> docs = new ArrayList<>(List.of(ROOT.resolve("README.md")));
    try (Stream<Path> s = Files.walk(ROOT.resolve("docs"))) {
      s.filter(p -> p.toString().endsWith(".md")).forEach(docs::add);
    }
    List<String> dead = new ArrayList<>();
    for (Path doc : docs) {
      Matcher m = LINK.matcher(Files.readString(doc));
      while (m.find()) {
        String target = m.group(1);
        if (target.matches("^[a-z]+:.*") || target.startsWith("#")) {
          continue; // web links and anchors
        }
        String file = target.replaceAll("#.*$", "");
        if (!Files.exists(doc.getParent().resolve(file))) {
          dead.add(ROOT.relativize(doc) + ": " + target);
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
}
