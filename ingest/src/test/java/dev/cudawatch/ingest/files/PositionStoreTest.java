package dev.cudawatch.ingest.files;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cudawatch.common.wire.WireJson;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PositionStoreTest {
  private static final Path OLD =
      Path.of("src/test/resources/upgrade/release-5be5e18/state/positions.json");

  @TempDir Path dir;

  private static FilePosition position(String id, long at) {
    return new FilePosition("/logs/" + id + ".log", "2049:" + id, "src-" + id, at, 0, 0);
  }

  @Test
  void savesAndLoadsPositions() throws Exception {
    PositionStore store = new PositionStore(dir);
    Map<String, FilePosition> saved = Map.of("a", position("a", 42));
    store.save(saved);
    assertEquals(saved, new PositionStore(dir).load());
  }

  /**
   * The agent's loop and its close() once checkpointed at the same time through one temporary file,
   * and one rename failed with NoSuchFileException (AgentOutageIT saw it). Two savers at once must
   * both succeed and leave a whole checkpoint.
   */
  @Test
  void twoConcurrentSaversBothSucceed() throws Exception {
    PositionStore store = new PositionStore(dir);
    CyclicBarrier start = new CyclicBarrier(2);
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      List<Future<?>> savers = new ArrayList<>();
      for (int w = 0; w < 2; w++) {
        String writer = "w" + w;
        savers.add(
            pool.submit(
                () -> {
                  start.await();
                  for (int i = 0; i < 300; i++) {
                    store.save(Map.of(writer, position(writer, i)));
                  }
                  return null;
                }));
      }
      for (Future<?> s : savers) {
        s.get();
      }
    } finally {
      pool.shutdownNow();
    }
    Map<String, FilePosition> last = new PositionStore(dir).load();
    assertEquals(1, last.size());
    assertTrue(last.values().iterator().next().position() == 299, last.toString());
    try (Stream<Path> files = Files.list(dir)) {
      assertEquals(List.of(dir.resolve("positions.json")), files.toList(), "no temporaries left");
    }
  }

  @Test
  void theUnversionedCheckpointOfRelease5be5e18IsReadAndMigratedByTheNextSave() throws Exception {
    Files.copy(OLD, dir.resolve("positions.json"));
    PositionStore store = new PositionStore(dir);
    Map<String, FilePosition> old = store.load();
    assertEquals(2, old.size());
    Map<String, Long> byName = new java.util.TreeMap<>();
    old.values().forEach(p -> byName.put(Path.of(p.path()).getFileName().toString(), p.position()));
    assertEquals(Map.of("train-a.log", 63L, "train-b.log", 34L), byName);

    store.save(old); // the first save after a start writes, even when nothing moved
    JsonNode now = WireJson.mapper().readTree(dir.resolve("positions.json").toFile());
    assertEquals(PositionStore.FORMAT, now.path("format").asInt());
    assertEquals("format", now.fieldNames().next(), "the format comes first");
    assertEquals(old, new PositionStore(dir).load(), "the new form reads back the same");
  }

  @Test
  void aCheckpointOfANewerReleaseStopsTheStartWithOneLineAndIsLeftAlone() throws Exception {
    String newer = "{\"format\":3,\"files\":{},\"something\":\"new\"}";
    Files.writeString(dir.resolve("positions.json"), newer);
    IOException e = assertThrows(IOException.class, () -> new PositionStore(dir).load());
    assertTrue(e.getMessage().contains("is format 3, written by a newer release"), e.getMessage());
    assertTrue(e.getMessage().contains("move the file away"), e.getMessage());
    assertEquals(1, e.getMessage().lines().count());
    assertEquals(newer, Files.readString(dir.resolve("positions.json")), "never overwritten");
  }

  @Test
  void aCorruptCheckpointStopsTheStartAsBefore() throws Exception {
    for (String junk : List.of("{\"a\":", "[1,2]", "{\"format\":2,\"files\":[]}")) {
      Files.writeString(dir.resolve("positions.json"), junk);
      IOException e = assertThrows(IOException.class, () -> new PositionStore(dir).load());
      assertTrue(e.getMessage().startsWith("cannot read the position checkpoint: "), junk);
    }
  }
}
