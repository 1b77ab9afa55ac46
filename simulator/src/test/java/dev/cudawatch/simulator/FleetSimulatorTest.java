package dev.cudawatch.simulator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.diagnosis.catalog.Catalog;
import dev.cudawatch.diagnosis.offline.OfflineClassifier;
import dev.cudawatch.diagnosis.taxonomy.Taxonomy;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FleetSimulatorTest {
  @TempDir Path dir;

  private static final SimSettings FULL =
      new SimSettings(3, 8, 300, 400, 10, 7, 1_795_000_000_000L);

  private static List<SimLine> run(SimSettings s, List<Expected> truth) {
    List<SimLine> out = new ArrayList<>();
    FleetSimulator sim = new FleetSimulator(s);
    sim.run(out::add);
    truth.addAll(sim.truth());
    return out;
  }

  @Test
  void theSameSeedWritesTheSameFleet() {
    List<Expected> t1 = new ArrayList<>();
    List<Expected> t2 = new ArrayList<>();
    SimSettings s = new SimSettings(2, 4, 60, 500, 10, 99, 1_795_000_000_000L);
    assertEquals(run(s, t1), run(s, t2));
    assertEquals(t1, t2);
    List<Expected> t3 = new ArrayList<>();
    SimSettings other = new SimSettings(2, 4, 60, 500, 10, 100, 1_795_000_000_000L);
    assertTrue(!run(other, t3).equals(run(s, new ArrayList<>())), "another seed, another fleet");
  }

  @Test
  void linesComeInTimeOrderAtTheAskedRate() {
    List<SimLine> lines = run(FULL, new ArrayList<>());
    for (int i = 1; i < lines.size(); i++) {
      assertTrue(lines.get(i - 1).timeMillis() <= lines.get(i).timeMillis(), "line " + i);
    }
    long logs =
        lines.stream().filter(l -> l.kind() == dev.cudawatch.common.wire.RecordKind.LOG).count();
    // healthy lines at 400/s for 300 s, minus restarts, plus failures and banners
    assertTrue(logs > 100_000 && logs < 140_000, "log lines: " + logs);
    assertTrue(lines.stream().anyMatch(l -> l.text().contains("\r")), "progress bars redraw");
  }

  @Test
  void everyTaxonomyClassIsInjectedAndTheClassifierFindsEachWhereTheTruthSays() throws Exception {
    List<Expected> truth = new ArrayList<>();
    try (FilesOutput files = new FilesOutput(dir, false)) {
      FleetSimulator sim = new FleetSimulator(FULL);
      sim.run(files);
      truth.addAll(sim.truth());
    }
    Set<String> injected = new TreeSet<>();
    truth.stream().filter(e -> e.type().equals("incident")).forEach(e -> injected.add(e.name()));
    // every injected failure is of a taxonomy class (today the simulator fakes all of them; a new
    // class needs no simulator change to be added)
    assertTrue(Taxonomy.builtIn().ids().containsAll(injected), "not in taxonomy.yaml: " + injected);

    // what the classifier finds in each file, by (host, file kind, class, root)
    Set<String> found = new HashSet<>();
    OfflineClassifier c = new OfflineClassifier(Catalog.builtIn(), Clock.systemUTC());
    try (Stream<Path> files = Files.walk(dir)) {
      for (Path f : files.filter(Files::isRegularFile).toList()) {
        String rel = dir.relativize(f).toString();
        String host = rel.substring(0, rel.indexOf('/'));
        try (InputStream in = Files.newInputStream(f)) {
          for (Incident i : c.classify(in, rel, n -> {})) {
            found.add(key(host, rel, i.incidentClass(), i.root()));
          }
        }
      }
    }
    List<String> missed = new ArrayList<>();
    for (Expected e : truth) {
      if (!e.type().equals("incident")) {
        continue;
      }
      String file =
          e.labels().containsKey("job")
              ? e.labels().get("host")
                  + "/"
                  + e.labels().get("job")
                  + "/rank-"
                  + e.labels().get("rank")
                  + ".log"
              : e.labels().get("host")
                  + (e.name().equals("memory_leak") ? "/nvidia-smi.csv" : "/kern.log");
      if (!found.contains(key(e.labels().get("host"), file, e.name(), e.root()))) {
        missed.add(e.name() + "@" + file);
      }
    }
    assertTrue(missed.isEmpty(), "not found: " + missed);
  }

  private static String key(String host, String file, String cls, boolean root) {
    return host + "|" + file + "|" + cls + "|" + root;
  }
}
