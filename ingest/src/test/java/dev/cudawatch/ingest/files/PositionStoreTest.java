package dev.cudawatch.ingest.files;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
}
