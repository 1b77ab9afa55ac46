package dev.cudawatch.ingest.files;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.cudawatch.ingest.framing.FramedLine;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The tailer on real files: idle files closed and reopened, links refused, failed lines kept. */
class FileTailerFaultsTest {
  private static final long IDLE_MS = 5_000;

  @TempDir Path dir;
  private final AtomicLong now = new AtomicLong(1_000_000);
  private final List<String> lines = new ArrayList<>();
  private final List<FramedLine> framed = new ArrayList<>();

  /** Acknowledges every line at once (a broker that always answers). */
  private final LineSink acking =
      (f, l, ack, fail) -> {
        lines.add(l.text());
        framed.add(l);
        ack.run();
      };

  private FileTailer tailer(String glob) {
    return FileTailer.builder()
        .globs(List.of(glob))
        .maxLineBytes(64 * 1024)
        .readBudget(1 << 20)
        .closeInactiveMs(IDLE_MS)
        .nowMs(now::get)
        .build();
  }

  @Test
  void anIdleFileIsClosedKeptAndReopenedWhereItWasWhenItGrows() throws Exception {
    Path log = Files.writeString(dir.resolve("a.log"), "one\ntwo\n");
    try (FileTailer t = tailer(dir + "/*.log")) {
      t.poll(acking);
      assertEquals(List.of("one", "two"), lines);
      assertEquals(1, t.openFiles());
      now.addAndGet(IDLE_MS);
      t.poll(acking);
      assertEquals(0, t.openFiles(), "closed after close_inactive");
      assertEquals(1, t.idleFiles());
      assertEquals(8, t.positions().values().iterator().next().position(), "position kept");
      String sourceId = t.positions().values().iterator().next().sourceId();
      t.poll(acking);
      assertEquals(0, t.openFiles(), "not reopened while it does not grow");

      Files.writeString(log, "three\n", StandardOpenOption.APPEND);
      t.poll(acking);
      assertEquals(List.of("one", "two", "three"), lines, "read on from its position");
      assertEquals(8, framed.get(2).start());
      assertEquals(1, t.openFiles());
      assertEquals(sourceId, t.positions().values().iterator().next().sourceId());

      now.addAndGet(IDLE_MS);
      t.poll(acking);
      Files.writeString(log, "new\n"); // truncated and rewritten while closed
      t.poll(acking);
      assertEquals("new", lines.get(3));
      assertEquals(0, framed.get(3).start(), "a truncation starts a new stream from byte 0");
      assertEquals(1, t.truncations());
      assertEquals(1, t.closedInactive() - 1, "closed twice in all");
    }
  }

  @Test
  void aFileWithAnUnacknowledgedLineIsNotClosed() throws Exception {
    Files.writeString(dir.resolve("a.log"), "one\n");
    List<Runnable> pending = new ArrayList<>();
    try (FileTailer t = tailer(dir + "/*.log")) {
      t.poll((f, l, ack, fail) -> pending.add(ack));
      now.addAndGet(2 * IDLE_MS);
      t.poll((f, l, ack, fail) -> pending.add(ack));
      assertEquals(1, t.openFiles(), "kept open until the broker has its lines");
      pending.forEach(Runnable::run);
      t.poll(acking);
      assertEquals(0, t.openFiles());
    }
  }

  @Test
  void aLinkPlantedInAWatchedDirectoryIsNeverRead() throws Exception {
    Path secret =
        Files.writeString(dir.resolve("secret.txt"), "aws_secret_access_key=AKIA-SECRET\n");
    Path logs = Files.createDirectories(dir.resolve("logs"));
    Files.createSymbolicLink(logs.resolve("evil.log"), secret);
    Files.createSymbolicLink(logs.resolve("dir.log"), dir); // a link to a directory, too
    new ProcessBuilder("mkfifo", logs.resolve("pipe.log").toString()).start().waitFor();
    Files.writeString(logs.resolve("ok.log"), "fine\n");
    try (FileTailer t = tailer(logs + "/*.log")) {
      for (int i = 0; i < 3; i++) {
        t.poll(acking); // a pipe opened for reading would block here
      }
      assertEquals(List.of("fine"), lines);
      assertEquals(3, t.refused(), "link, link to a directory, pipe: each counted once");
    }
    assertThrows(
        FileIdentity.NotRegularFileException.class,
        () -> FileIdentity.openRegular(logs.resolve("evil.log"), null),
        "opened with O_NOFOLLOW");
  }

  @Test
  void aFollowedFileSwappedForALinkWhileIdleIsNotFollowed() throws Exception {
    Path secret = Files.writeString(dir.resolve("secret.txt"), "token=SECRET\nmore=SECRET\n");
    Path logs = Files.createDirectories(dir.resolve("logs"));
    Path log = Files.writeString(logs.resolve("a.log"), "one\n");
    try (FileTailer t = tailer(logs + "/*.log")) {
      t.poll(acking);
      now.addAndGet(IDLE_MS);
      t.poll(acking);
      assertEquals(1, t.idleFiles());
      Files.delete(log);
      Files.createSymbolicLink(log, secret);
      t.poll(acking);
      t.poll(acking);
      assertEquals(List.of("one"), lines);
      assertEquals(1, t.refused());
    }
  }

  @Test
  void aFailedLineHoldsThePositionAndIsSentAgain() throws Exception {
    Files.writeString(dir.resolve("a.log"), "one\ntwo\nthree\n");
    List<String> sent = new ArrayList<>();
    try (FileTailer t = tailer(dir + "/*.log")) {
      // the broker takes "one" and "three" but fails "two" for good
      t.poll(
          (f, l, ack, fail) -> {
            sent.add(l.text());
            if (l.text().equals("two")) {
              fail.run();
            } else {
              ack.run();
            }
          });
      assertEquals(4, t.positions().values().iterator().next().position(), "not past 'two'");
      LineSink failTwo =
          (f, l, ack, fail) -> {
            sent.add(l.text());
            (l.text().equals("two") ? fail : ack).run();
          };
      t.poll(failTwo); // read again at once from 'two'; fails again
      assertEquals(4, t.positions().values().iterator().next().position());
      t.poll(failTwo);
      assertEquals(
          List.of("one", "two", "three", "two", "three"), sent, "then a second apart, not a loop");
      now.addAndGet(1_000);
      t.poll(
          (f, l, ack, fail) -> {
            sent.add(l.text());
            ack.run();
          });
      assertEquals(
          List.of("one", "two", "three", "two", "three", "two", "three"),
          sent,
          "read again from 'two'");
      assertEquals(14, t.positions().values().iterator().next().position());
      assertEquals(2, t.rewinds());
    }
  }
}
