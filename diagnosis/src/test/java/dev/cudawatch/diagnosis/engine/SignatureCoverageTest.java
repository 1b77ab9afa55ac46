package dev.cudawatch.diagnosis.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.diagnosis.catalog.Catalog;
import dev.cudawatch.diagnosis.catalog.Role;
import dev.cudawatch.diagnosis.catalog.Signature;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every signature that can start an incident is exercised by at least one golden case or one
 * excerpt of the public corpus (whose expectations live in public/labels.jsonl).
 */
class SignatureCoverageTest {
  @Test
  void everySignatureHasAGoldenCase() throws Exception {
    Path dir = Path.of(System.getProperty("golden.dir", "src/test/resources/golden"));
    Path publicDir = Path.of(System.getProperty("public.dir", "src/test/resources/public"));
    Set<String> used = new TreeSet<>();
    List<Path> inputs;
    try (Stream<Path> s = Stream.concat(Files.list(dir), Files.list(publicDir))) {
      inputs = s.filter(p -> p.toString().endsWith(".log")).toList();
    }
    for (Path p : inputs) {
      for (Incident i : GoldenTest.classify(p, p.toString())) {
        used.add(i.signature());
      }
    }
    Set<String> missing = new TreeSet<>();
    for (Signature s : Catalog.builtIn().signatures()) {
      // a restart marker makes no incident; torchrun_restart.golden shows its effect (two roots);
      // a prefix line's fields show in the next incident (torchrun_sigkill.golden: rank, host)
      if (s.role() != Role.ATTACH
          && s.role() != Role.RESTART
          && s.role() != Role.PREFIX
          && !used.contains(s.id())) {
        missing.add(s.id());
      }
    }
    assertEquals(Set.of(), missing, "signatures without a golden case");
  }
}
