package dev.cudawatch.ingest.files;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.ingest.AgentSettings;
import dev.cudawatch.ingest.framing.FramedLine;
import java.io.BufferedWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * With the agent's default read budget, a round takes a share of each file: a failing job's new
 * file and its quiet marker do not wait behind a chatty neighbour's backlog (measured in bench/run:
 * with 4 MiB a round, a probe's marker waited 2-8 s behind 10,000 lines/s starting with the agent).
 */
class FairReadsTest {
  private static final long QUIET_MS = 50;
  private static final int BUSY_LINES = 100_000;

  @TempDir Path dir;
  private final AtomicLong now = new AtomicLong(1_000_000);
  private final List<String> failing = new ArrayList<>();
  private int busyRead;

  private final LineSink sink =
      new LineSink() {
        @Override
        public void line(TailedFile f, FramedLine l, Runnable onAck, Runnable onFailure) {
          if (f.path().getFileName().toString().startsWith("busy")) {
            busyRead++;
          } else {
            failing.add(l.text());
          }
          onAck.run();
        }

        @Override
        public void quiet(TailedFile f, long end, String stream) {
          if (!f.path().getFileName().toString().startsWith("busy")) {
            failing.add("quiet@" + end);
          }
        }
      };

  @Test
  void aNewFilesLineAndMarkerGoOutWhileABusyFileStillHasABacklog() throws Exception {
    try (BufferedWriter w = Files.newBufferedWriter(dir.resolve("busy-rank0.log"))) {
      for (int i = 0; i < BUSY_LINES; i++) {
        w.write("step " + i + " | loss 2.3145 | lr 3.0e-4 | tokens/s 181,223\n");
      }
    }
    String oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB";
    Files.writeString(dir.resolve("job-9.log"), oom + "\n");
    long budget = AgentSettings.defaults().readBudgetBytes();
    try (FileTailer t =
        FileTailer.builder()
            .globs(List.of(dir + "/*.log"))
            .maxLineBytes(64 * 1024)
            .readBudget(budget)
            .closeInactiveMs(300_000)
            .quietMarkerMs(QUIET_MS)
            .nowMs(now::get)
            .build()) {
      t.poll(sink);
      assertEquals(List.of(oom), failing, "the new file's line, in the first round");
      assertTrue(busyRead < BUSY_LINES / 10, "the busy file gave a share, not all: " + busyRead);

      now.addAndGet(QUIET_MS);
      t.poll(sink);
      assertEquals(List.of(oom, "quiet@" + (oom.length() + 1)), failing, "its marker, next round");
      assertTrue(busyRead < BUSY_LINES / 5, "the busy file still has its backlog: " + busyRead);

      while (busyRead < BUSY_LINES) {
        assertTrue(t.poll(sink) > 0, "every busy line is read in later rounds");
      }
      assertEquals(2, failing.size(), "nothing more from the quiet file");
    }
  }
}
