package dev.cudawatch.common.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AtomicFilesTest {
  @TempDir Path dir;

  @Test
  void replacesTheFileWholeAndOwnerOnly() throws Exception {
    Path f = dir.resolve("positions.json");
    AtomicFiles.write(f, "old".getBytes(StandardCharsets.UTF_8));
    AtomicFiles.write(f, "new".getBytes(StandardCharsets.UTF_8));
    assertEquals("new", Files.readString(f));
    assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(f)));
    assertEquals(List.of(f), list());
  }

  /** Two writers at once (what the agent's close and its loop once did) both succeed. */
  @Test
  void concurrentWritersNeverFailAndLeaveOneWholeFile() throws Exception {
    Path f = dir.resolve("positions.json");
    int writers = 4;
    CyclicBarrier start = new CyclicBarrier(writers);
    ExecutorService pool = Executors.newFixedThreadPool(writers);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int w = 0; w < writers; w++) {
        String content = ("writer-" + w + "|").repeat(10_000);
        done.add(
            pool.submit(
                () -> {
                  start.await();
                  for (int i = 0; i < 50; i++) {
                    AtomicFiles.write(f, content.getBytes(StandardCharsets.UTF_8));
                  }
                  return null;
                }));
      }
      for (Future<?> d : done) {
        d.get(); // a lost rename race would surface here as NoSuchFileException
      }
    } finally {
      pool.shutdownNow();
    }
    String text = Files.readString(f);
    String first = text.substring(0, text.indexOf('|') + 1);
    assertEquals(first.repeat(10_000), text, "one writer's content, whole");
    assertEquals(List.of(f), list(), "no temporary file left");
  }

  @Test
  void temporariesACrashLeftAreCleared() throws Exception {
    Path stale = dir.resolve(".positions.json.123.tmp");
    Files.writeString(stale, "half");
    Path kept = dir.resolve("positions.json");
    Files.writeString(kept, "{}");
    assertTrue(AtomicFiles.isTemp(stale));
    assertFalse(AtomicFiles.isTemp(kept));
    assertEquals(1, AtomicFiles.clearTemps(dir));
    assertEquals(List.of(kept), list());
  }

  private List<Path> list() throws Exception {
    try (Stream<Path> s = Files.list(dir)) {
      return s.sorted().toList();
    }
  }
}
