package dev.cudawatch.ingest.proc;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Runs a helper program (nvidia-smi, scontrol) with a real deadline. Its output is read on a daemon
 * thread while the caller waits, so a program that prints more than a pipe holds cannot stall it,
 * and one that hangs (a wedged GPU makes nvidia-smi hang in the kernel) is killed with every
 * process it started once the deadline passes. The caller never waits longer than the deadline,
 * even for a process the kernel will not let die: the reader thread is left behind, a daemon, and
 * the result is a timeout.
 */
public final class ExternalCommand {
  /** How a run ended: {@code output} is null unless it exited 0 in time. */
  public record Result(Outcome outcome, int exitCode, String output) {
    public boolean ok() {
      return outcome == Outcome.EXITED && exitCode == 0;
    }
  }

  /** Why a run gave no output. */
  public enum Outcome {
    EXITED,
    TIMED_OUT,
    NOT_STARTED
  }

  private static final int MAX_OUTPUT_BYTES = 4 << 20;

  /** How long the pipe is read after the program exited. */
  private static final Duration EXIT_GRACE = Duration.ofMillis(500);

  private ExternalCommand() {}

  /**
   * Runs {@code command} with stdin closed and stderr merged into stdout; returns within {@code
   * timeout} (plus the time to start it).
   */
  public static Result run(List<String> command, Duration timeout) {
    Process p;
    try {
      p =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
              .start();
    } catch (IOException | RuntimeException e) {
      return new Result(Outcome.NOT_STARTED, -1, null);
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    CompletableFuture<Void> eof = new CompletableFuture<>();
    Thread reader =
        new Thread(
            () -> {
              try (InputStream in = p.getInputStream()) {
                readBounded(in, out);
              } catch (IOException | RuntimeException e) {
                // what was read stays
              }
              eof.complete(null);
            },
            "cudawatch-cmd-" + shortName(command));
    reader.setDaemon(true);
    reader.start();
    long deadline = System.nanoTime() + timeout.toNanos(); // a wait: the monotonic clock
    try {
      if (!p.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
        kill(p);
        return new Result(Outcome.TIMED_OUT, -1, null);
      }
      // it exited, so all it wrote is in the pipe: read on briefly; a child it left behind may hold
      // the pipe open for good, and must not hold the caller (its reader thread stays, a daemon)
      if (!done(eof, Math.min(EXIT_GRACE.toNanos(), deadline - System.nanoTime()))) {
        // no end of file: read on while the output still grows (a loaded machine schedules the
        // reader late), until the deadline at most
        for (int last = -1, size; System.nanoTime() < deadline; last = size) {
          synchronized (out) {
            size = out.size();
          }
          if ((size > 0 && size == last) || done(eof, 100_000_000L)) {
            break;
          }
        }
      }
      String text;
      synchronized (out) {
        text = out.toString(StandardCharsets.UTF_8);
      }
      return new Result(Outcome.EXITED, p.exitValue(), p.exitValue() == 0 ? text : null);
    } catch (InterruptedException e) {
      kill(p);
      Thread.currentThread().interrupt();
      return new Result(Outcome.TIMED_OUT, -1, null);
    } catch (ExecutionException e) {
      return new Result(Outcome.EXITED, p.exitValue(), null);
    }
  }

  private static boolean done(CompletableFuture<Void> eof, long nanos)
      throws InterruptedException, ExecutionException {
    try {
      eof.get(Math.max(1, nanos), TimeUnit.NANOSECONDS);
      return true;
    } catch (TimeoutException e) {
      return false;
    }
  }

  /** The output of a run that exited 0 in time, or null. */
  public static String output(Duration timeout, String... command) {
    Result r = run(List.of(command), timeout);
    return r.ok() ? r.output() : null;
  }

  private static void readBounded(InputStream in, ByteArrayOutputStream out) throws IOException {
    byte[] buf = new byte[8192];
    for (int n; (n = in.read(buf)) > 0; ) {
      synchronized (out) {
        if (out.size() < MAX_OUTPUT_BYTES) {
          out.write(buf, 0, Math.min(n, MAX_OUTPUT_BYTES - out.size()));
        } // past the cap: read on and drop, so the program never blocks on a full pipe
      }
    }
  }

  /** Kills the process and everything it started (what it forked would hold the pipe). */
  public static void kill(Process p) {
    try {
      p.descendants().forEach(ProcessHandle::destroyForcibly);
    } catch (RuntimeException e) {
      // the process table moved under us: the process itself is still killed below
    }
    p.destroyForcibly();
  }

  private static String shortName(List<String> command) {
    String c = command.isEmpty() ? "?" : command.get(0);
    return c.substring(c.lastIndexOf('/') + 1);
  }
}
