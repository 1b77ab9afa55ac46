package dev.cudawatch.ingest.streams;

import java.util.concurrent.atomic.AtomicLong;

/**
 * How the agent's nvidia-smi calls fare. A call that times out (a wedged GPU makes nvidia-smi hang
 * in the kernel) is counted and leaves a warning until the next call answers. It is a warning, not
 * a failed health check: the agent itself is fine and keeps shipping, and a liveness probe that
 * restarts it would not unwedge the GPU.
 */
public final class NvidiaSmiHealth {
  private final AtomicLong timeouts = new AtomicLong();
  private volatile String warning;

  /** A call ran past its deadline and was killed. */
  public void timedOut() {
    timeouts.incrementAndGet();
    warning = "timed out";
  }

  /** A call answered in time. */
  public void answered() {
    warning = null;
  }

  /** Calls killed at their deadline. */
  public long timeouts() {
    return timeouts.get();
  }

  /** "timed out" while the last call did, else null. */
  public String warning() {
    return warning;
  }
}
