package dev.cudawatch.ingest.attribution;

import dev.cudawatch.ingest.proc.ExternalCommand;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * {@code scontrol show job -d ID} as a lookup: the output for a job id, or null when scontrol is
 * absent, fails, or misses its deadline (then it is killed with its children: {@link
 * ExternalCommand}). Counts the calls that timed out.
 */
public final class ScontrolCommand implements Function<String, String> {
  private final String binary;
  private final Duration timeout;
  private final AtomicLong timeouts = new AtomicLong();

  public ScontrolCommand(String binary, Duration timeout) {
    this.binary = binary;
    this.timeout = timeout;
  }

  @Override
  public String apply(String job) {
    if (!job.matches("[0-9]{1,12}(_[0-9]{1,9})?")) {
      return null;
    }
    ExternalCommand.Result r =
        ExternalCommand.run(List.of(binary, "show", "job", "-d", job), timeout);
    if (r.outcome() == ExternalCommand.Outcome.TIMED_OUT) {
      timeouts.incrementAndGet();
    }
    return r.ok() ? r.output() : null;
  }

  /** Calls killed at their deadline. */
  public long timeouts() {
    return timeouts.get();
  }
}
