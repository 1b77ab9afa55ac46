package dev.cudawatch.diagnosis.catalog;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.diagnosis.datafile.CatalogException;
import dev.cudawatch.diagnosis.taxonomy.Taxonomy;
import dev.cudawatch.diagnosis.taxonomy.XidVerdict;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CatalogLoaderTest {
  @TempDir Path dir;

  private CatalogException loadFails(String yaml) throws Exception {
    Path f = dir.resolve("site.yaml");
    Files.writeString(f, yaml);
    return assertThrows(CatalogException.class, () -> Catalog.load(List.of(f)));
  }

  @Test
  void aBadPatternNamesFileLineAndReason() throws Exception {
    CatalogException e =
        loadFails(
            "version: 1\nsignatures:\n  - id: ok\n    class: cuda_error\n    keywords: [x]\n    match: ['x']\n  - id: broken\n    class: cuda_error\n    keywords: [y]\n    match: ['(unclosed']\n");
    assertTrue(e.getMessage().contains("site.yaml:7"), e.getMessage());
    assertTrue(e.getMessage().contains("broken"), e.getMessage());
    assertTrue(e.getMessage().contains("bad pattern"), e.getMessage());
  }

  @Test
  void anUnknownKeyIsAnError() throws Exception {
    CatalogException e =
        loadFails(
            "signatures:\n  - id: a\n    class: cuda_error\n    keywords: [x]\n    match: ['x']\n    colour: red\n");
    assertTrue(e.getMessage().contains("site.yaml:2"), e.getMessage());
    assertTrue(e.getMessage().contains("unknown key 'colour'"), e.getMessage());
  }

  @Test
  void anUnknownClassIsAnError() throws Exception {
    CatalogException e =
        loadFails(
            "signatures:\n  - id: a\n    class: gpu_on_fire\n    keywords: [x]\n    match: ['x']\n");
    assertTrue(e.getMessage().contains("unknown class 'gpu_on_fire'"), e.getMessage());
  }

  @Test
  void aSignatureWithoutKeywordsIsAnError() throws Exception {
    CatalogException e =
        loadFails("signatures:\n  - id: a\n    class: cuda_error\n    match: ['x']\n");
    assertTrue(e.getMessage().contains("keyword"), e.getMessage());
  }

  @Test
  void aUserSignatureTakesPriority() throws Exception {
    Path f = dir.resolve("site.yaml");
    Files.writeString(
        f,
        "signatures:\n  - id: site_oom\n    class: host_oom\n    keywords: [slurmstepd]\n    match: ['slurmstepd: error: Detected \\d+ oom[-_]kill event']\n");
    Catalog c = Catalog.load(List.of(f));
    assertEquals("site_oom", c.signatures().get(0).id());
  }

  @Test
  void everyCudaErrorMapsToATaxonomyClassOnce() {
    Catalog c = Catalog.builtIn();
    Set<Integer> codes = new HashSet<>();
    Set<String> names = new HashSet<>();
    for (CudaError e : c.cudaErrors().all()) {
      assertTrue(c.taxonomy().contains(e.incidentClass()), e.toString());
      assertTrue(codes.add(e.code()), "duplicate code " + e.code());
      if (e.runtime() != null) {
        assertTrue(names.add(e.runtime()), e.runtime());
      }
      if (e.driver() != null) {
        assertTrue(names.add(e.driver()), e.driver());
      }
      assertEquals(e, c.cudaErrors().byName(e.name()).orElseThrow());
    }
    assertTrue(codes.size() > 100, "the whole cudaError_t enum");
    assertEquals("illegal_memory_access", c.cudaErrors().byCode(700).orElseThrow().incidentClass());
    assertEquals(
        "cuda_oom",
        c.cudaErrors().byName("CUDA_ERROR_OUT_OF_MEMORY").orElseThrow().incidentClass());
    assertEquals(
        "no_kernel_image",
        c.cudaErrors()
            .byText("no kernel image is available for execution on the device")
            .orElseThrow()
            .incidentClass());
  }

  @Test
  void theXidCatalogCoversEveryPublishedCode() {
    Taxonomy t = Catalog.builtIn().taxonomy();
    for (int x = 1; x <= 172; x++) {
      assertTrue(t.xid(x).isPresent(), "Xid " + x);
    }
    assertEquals(XidVerdict.HARDWARE, t.xid(79).orElseThrow().verdict());
    assertEquals(XidVerdict.APPLICATION, t.xid(31).orElseThrow().verdict());
    assertEquals(XidVerdict.DRIVER, t.xid(119).orElseThrow().verdict());
  }

  @Test
  void aSignatureOfAClassTheTaxonomyLacksFailsWithItsLine() throws Exception {
    CatalogException e =
        loadFails(
            "version: 1\nsignatures:\n  - id: ok\n    class: cuda_error\n    keywords: [x]\n    match: ['x']\n  - id: new_one\n    class: gpu_melted\n    keywords: [y]\n    match: ['y']\n");
    assertTrue(e.getMessage().startsWith(dir.resolve("site.yaml") + ":7"), e.getMessage());
    assertTrue(e.getMessage().contains("unknown class 'gpu_melted'"), e.getMessage());
  }

  @Test
  void theBuiltInSignaturesLeaveTheAdviceToTheTaxonomy() {
    // one place for advice: a built-in signature that brought its own would split it again
    for (Signature s : Catalog.builtIn().signatures()) {
      assertEquals(null, s.explanation(), s.id());
      assertTrue(s.nextSteps().isEmpty(), s.id());
    }
  }
}
