package dev.cudawatch.ingest.run;

import java.io.PrintStream;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * What `run` tells the researcher when the job failed, off the job's path: started once the job has
 * ended, on a daemon thread, so it never holds the job's output or its exit status; awaited until a
 * deadline, after which only one line says there is none. A job whose output holds nothing the
 * catalog knows gets nothing (its own stderr says more than "unknown" would).
 */
public final class FailureReport {
  private final CompletableFuture<List<String>> lines = new CompletableFuture<>();
  private final CompletableFuture<Void> finished = new CompletableFuture<>();
  private final long deadlineNanos;
  private final Duration budget;

  private FailureReport(long deadlineNanos, Duration budget) {
    this.deadlineNanos = deadlineNanos;
    this.budget = budget;
  }

  /**
   * Starts diagnosing {@code tails} (stream name to its kept output) at once.
   *
   * @param incidents the alerts service's page of the job's incidents, or null
   * @param env the job's environment: in a Slurm job the verdict also goes to its Comment
   */
  public static FailureReport start(
      Map<String, OutputTail> tails,
      ExitStatus status,
      String incidents,
      Map<String, String> env,
      Duration budget) {
    FailureReport r = new FailureReport(System.nanoTime() + budget.toNanos(), budget);
    Thread t =
        new Thread(
            () -> {
              try {
                Map<String, OutputTail.Window> windows = new LinkedHashMap<>();
                tails.forEach((k, v) -> windows.put(k, v.window()));
                Optional<RunDiagnosis.Finding> f = RunDiagnosis.diagnose(windows);
                r.lines.complete(
                    f.map(x -> RunDiagnosis.report(x, status, incidents)).orElse(List.of()));
                f.ifPresent(x -> SlurmComment.set(env, RunDiagnosis.verdict(x), r.deadlineNanos));
              } catch (Throwable e) {
                r.lines.complete(List.of("cudawatch run: no diagnosis: " + e));
              }
              r.finished.complete(null);
            },
            "cudawatch-run-diagnosis");
    t.setDaemon(true); // a diagnosis past its deadline must not keep `run` alive
    t.setPriority(Thread.MIN_PRIORITY);
    t.start();
    return r;
  }

  /**
   * Prints the diagnosis, or one line if it is not ready by the deadline, then waits (within the
   * same deadline) for the Slurm Comment to be written; never throws.
   */
  public void print(PrintStream err) {
    List<String> out;
    try {
      out = lines.get(Math.max(1, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      out =
          List.of(
              "cudawatch run: no diagnosis within "
                  + budget.toSeconds()
                  + " s; `cudawatch classify LOG` gives one");
    } catch (Exception e) {
      out = List.of();
    }
    try {
      for (String l : out) {
        err.println(l);
      }
      err.flush();
    } catch (RuntimeException e) {
      // the job's stderr is gone
    }
    try {
      finished.get(Math.max(1, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (Exception e) {
      // past the deadline: `run` leaves; the Comment is not worth the job's time
    }
  }

  /** The alerts service's list of the job's incidents ({@code /?job=}), or null. */
  public static String incidentsLink(String serviceUrl, String job) {
    if (serviceUrl == null || serviceUrl.isBlank() || job == null) {
      return null;
    }
    String base = serviceUrl.strip().replaceAll("/+$", "");
    return base + "/?job=" + URLEncoder.encode(job, StandardCharsets.UTF_8);
  }
}
