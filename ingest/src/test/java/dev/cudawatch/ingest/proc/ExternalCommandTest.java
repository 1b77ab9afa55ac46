package dev.cudawatch.ingest.proc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Real programs that hang, flood a pipe, leave a child behind or do not exist. */
class ExternalCommandTest {
  @Test
  void aProgramThatHangsIsKilledAtTheDeadline() {
    long t0 = System.nanoTime();
    ExternalCommand.Result r =
        ExternalCommand.run(
            List.of("sh", "-c", "echo partial; exec sleep 600"), Duration.ofMillis(300));
    long ms = (System.nanoTime() - t0) / 1_000_000;
    assertEquals(ExternalCommand.Outcome.TIMED_OUT, r.outcome());
    assertNull(r.output());
    assertTrue(ms < 10_000, "returned after " + ms + " ms, not after the sleep");
  }

  @Test
  void outputLargerThanAPipeIsReadWhileWaiting() {
    // 4 MB: far over the 64 KiB a pipe holds; a caller that waited before reading would deadlock
    ExternalCommand.Result r =
        ExternalCommand.run(
            List.of("sh", "-c", "head -c 4000000 /dev/zero | tr '\\0' x"), Duration.ofSeconds(60));
    assertTrue(r.ok(), r.toString().substring(0, 40));
    assertEquals(4_000_000, r.output().length());
  }

  @Test
  void aChildLeftHoldingThePipeDoesNotHoldTheCaller() {
    long t0 = System.nanoTime();
    ExternalCommand.Result r =
        ExternalCommand.run(List.of("sh", "-c", "sleep 30 & echo done"), Duration.ofSeconds(20));
    long ms = (System.nanoTime() - t0) / 1_000_000;
    assertTrue(r.ok(), r.toString());
    assertEquals("done\n", r.output());
    assertTrue(ms < 10_000, "returned after " + ms + " ms, not when the child's pipe closed");
  }

  @Test
  void aMissingProgramIsNotStarted() {
    ExternalCommand.Result r =
        ExternalCommand.run(List.of("/nonexistent/nvidia-smi", "-L"), Duration.ofSeconds(5));
    assertEquals(ExternalCommand.Outcome.NOT_STARTED, r.outcome());
  }

  @Test
  void aFailingProgramGivesNoOutput() {
    ExternalCommand.Result r =
        ExternalCommand.run(List.of("sh", "-c", "echo no; exit 3"), Duration.ofSeconds(30));
    assertEquals(ExternalCommand.Outcome.EXITED, r.outcome());
    assertEquals(3, r.exitCode());
    assertNull(r.output());
    assertEquals("ok\n", ExternalCommand.output(Duration.ofSeconds(30), "sh", "-c", "echo ok"));
  }
}
