package dev.cudawatch.ingest.lifecycle;

/**
 * A source thread that can be told to stop. One that returns after it was told to (a run spool's
 * forwarder closed once its spool is shipped, a source stopped at shutdown) finished its work: it
 * did not die, and must not make the agent unhealthy.
 */
public interface StoppableSource extends Runnable {
  /** True once the source was told to stop. */
  boolean stopRequested();
}
