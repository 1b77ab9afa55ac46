package dev.cudawatch.diagnosis.taxonomy;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * docs/taxonomy.md is generated from taxonomy.yaml: this test fails when they differ. Regenerate,
 * like the golden files, with {@code -Dgolden.update=true}.
 */
class TaxonomyDocTest {
  private static final Path DOC =
      Path.of(System.getProperty("taxonomy.doc", "../docs/taxonomy.md"));

  @Test
  void docsTaxonomyMdIsGeneratedFromTaxonomyYaml() throws IOException {
    String actual = TaxonomyDoc.render(Taxonomy.builtIn());
    if (Boolean.getBoolean("golden.update")) {
      Files.createDirectories(DOC.getParent());
      Files.writeString(DOC, actual);
      return;
    }
    String expected = Files.exists(DOC) ? Files.readString(DOC) : "(no file " + DOC + ")";
    assertEquals(
        expected,
        actual,
        DOC
            + " is out of date: regenerate it with ./mvnw -pl diagnosis -am verify"
            + " -Dtest=TaxonomyDocTest -Dsurefire.failIfNoSpecifiedTests=false -Dgolden.update=true");
  }
}
