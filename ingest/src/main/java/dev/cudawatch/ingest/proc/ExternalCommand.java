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
    CompletableFuture<String> output = new CompletableFuture<>();
    Thread reader =
        new Thread(
            () -> {
              try (InputStream in = p.getInputStream()) {
                output.complete(readBounded(in));
              } catch (IOException | RuntimeException e) {
                output.complete("");
              }
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
      // the process exited; a child it left holding the pipe must not hold us either
      long left = Math.max(1, deadline - System.nanoTime());
      String text = output.get(left, TimeUnit.NANOSECONDS);
      return new Result(Outcome.EXITED, p.exitValue(), p.exitValue() == 0 ? text : null);
    } catch (TimeoutException e) {
      kill(p);
      return new Result(Outcome.TIMED_OUT, -1, null);
    } catch (InterruptedException e) {
      kill(p);
      Thread.currentThread().interrupt();
      return new Result(Outcome.TIMED_OUT, -1, null);
    } catch (ExecutionException e) {
      return new Result(Outcome.EXITED, p.exitValue(), null);
    }
  }

  /** The output of a run that exited 0 in time, or null. */
  public static String output(Duration timeout, String... command) {
    Result r = run(List.of(command), timeout);
    return r.ok() ? r.output() : null;
  }

  private static String readBounded(InputStream in) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    byte[] buf = new byte[8192];
    for (int n; (n = in.read(buf)) > 0; ) {
      if (out.size() < MAX_OUTPUT_BYTES) {
        out.write(buf, 0, Math.min(n, MAX_OUTPUT_BYTES - out.size()));
      } // past the cap: read on and drop, so the program never blocks on a full pipe
    }
    return out.toString(StandardCharsets.UTF_8);
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
