package dev.cudawatch.ingest.files;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.cudawatch.ingest.framing.FramedLine;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tailer on real files tells when a file's writer paused after its lines (the quiet marker the
 * processor closes a stream's incidents on): once per burst, at the end of the last line, never
 * inside an unfinished line, and when a file ends.
 */
class QuietMarkersTest {
  private static final long QUIET_MS = 50;

  @TempDir Path dir;
  private final AtomicLong now = new AtomicLong(1_000_000);
  private final List<String> events = new ArrayList<>();

  /** Records lines and markers in the order the tailer hands them on, and acknowledges lines. */
  private final LineSink sink =
      new LineSink() {
        @Override
        public void line(TailedFile f, FramedLine l, Runnable onAck, Runnable onFailure) {
          events.add(l.text());
          onAck.run();
        }

        @Override
        public void quiet(TailedFile f, long end, String stream) {
          events.add("quiet@" + end + (stream == null ? "" : "/" + stream));
        }
      };

  private FileTailer tailer(String glob, List<String> criGlobs) {
    return FileTailer.builder()
        .globs(List.of(glob))
        .criGlobs(criGlobs)
        .maxLineBytes(64 * 1024)
        .readBudget(1 << 20)
        .closeInactiveMs(300_000)
        .quietMarkerMs(QUIET_MS)
        .nowMs(now::get)
        .build();
  }

  @Test
  void aBurstGetsOneMarkerAtTheEndOfItsLastLineOnceTheWriterPaused() throws Exception {
    Path log = Files.writeString(dir.resolve("train.log"), "Traceback\n  File x\nError: boom\n");
    try (FileTailer t = tailer(dir + "/*.log", List.of())) {
      t.poll(sink);
      assertEquals(List.of("Traceback", "  File x", "Error: boom"), events, "no marker yet");
      now.addAndGet(QUIET_MS - 1);
      t.poll(sink);
      assertEquals(3, events.size(), "not quiet for long enough");
      now.addAndGet(1);
      t.poll(sink);
      assertEquals("quiet@31", events.get(3), "at the end of the last line");
      now.addAndGet(10 * QUIET_MS);
      t.poll(sink);
      assertEquals(4, events.size(), "one marker per burst");

      Files.writeString(log, "step 2\n", StandardOpenOption.APPEND);
      t.poll(sink);
      now.addAndGet(QUIET_MS);
      t.poll(sink);
      assertEquals(List.of("step 2", "quiet@38"), events.subList(4, 6));
    }
  }

  @Test
  void anUnfinishedLineIsNotQuiet() throws Exception {
    Path log = Files.writeString(dir.resolve("train.log"), "RuntimeError: CUDA error: an ille");
    try (FileTailer t = tailer(dir + "/*.log", List.of())) {
      t.poll(sink);
      now.addAndGet(10 * QUIET_MS);
      t.poll(sink);
      assertEquals(List.of(), events, "the writer is inside a line");
      Files.writeString(log, "gal memory access was encountered\n", StandardOpenOption.APPEND);
      t.poll(sink);
      now.addAndGet(QUIET_MS);
      t.poll(sink);
      assertEquals(
          List.of("RuntimeError: CUDA error: an illegal memory access was encountered", "quiet@67"),
          events);
    }
  }

  @Test
  void aContainerLogGetsAMarkerForEachStreamItsLinesCameFrom() throws Exception {
    Files.writeString(
        dir.resolve("pod.log"),
        "2026-11-22T10:00:00.000000001Z stdout F epoch 1\n"
            + "2026-11-22T10:00:00.000000002Z stderr F Traceback (most recent call last):\n");
    try (FileTailer t = tailer(dir + "/*.log", List.of(dir + "/*.log"))) {
      t.poll(sink);
      now.addAndGet(QUIET_MS);
      t.poll(sink);
      assertEquals(
          List.of(
              "epoch 1",
              "Traceback (most recent call last):",
              "quiet@123/stdout",
              "quiet@123/stderr"),
          events);
    }
  }

  @Test
  void aFileDeletedAfterItsLastLinesIsMarkedQuietOnceDrained() throws Exception {
    Path log = Files.writeString(dir.resolve("train.log"), "one\n");
    try (FileTailer t = tailer(dir + "/*.log", List.of())) {
      t.poll(sink);
      Files.writeString(log, "last words", StandardOpenOption.APPEND); // no newline: it ends here
      Files.move(log, dir.resolve("train.old"));
      t.poll(sink);
      assertEquals(List.of("one", "last words", "quiet@14"), events, "drained, then marked");
    }
  }

  @Test
  void noMarkersUnlessAsked() throws Exception {
    Files.writeString(dir.resolve("train.log"), "Error: boom\n");
    try (FileTailer t =
        FileTailer.builder()
            .globs(List.of(dir + "/*.log"))
            .maxLineBytes(64 * 1024)
            .readBudget(1 << 20)
            .closeInactiveMs(300_000)
            .nowMs(now::get)
            .build()) {
      t.poll(sink);
      now.addAndGet(10 * QUIET_MS);
      t.poll(sink);
      assertEquals(List.of("Error: boom"), events);
    }
  }
}
