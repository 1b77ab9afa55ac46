package dev.cudawatch.simulator;

/**
 * The simulated fleet.
 *
 * @param hosts nodes, each running one job of {@code gpusPerHost} ranks (one per GPU)
 * @param gpusPerHost GPUs per node
 * @param seconds how long the simulation runs (simulated time)
 * @param linesPerSecond healthy output of the whole fleet
 * @param failureEverySeconds one injected scenario every so many seconds
 * @param seed everything random derives from it: the same seed writes the same fleet
 * @param startMillis simulated start time (epoch milliseconds)
 */
public record SimSettings(
    int hosts,
    int gpusPerHost,
    long seconds,
    int linesPerSecond,
    int failureEverySeconds,
    long seed,
    long startMillis) {

  public SimSettings {
    if (hosts < 1 || gpusPerHost < 1 || gpusPerHost > 64) {
      throw new IllegalArgumentException("hosts >= 1 and gpus per host 1..64");
    }
    if (seconds < 1 || linesPerSecond < 0 || failureEverySeconds < 5) {
      throw new IllegalArgumentException(
          "seconds >= 1, lines per second >= 0, a failure at most every 5 s");
    }
  }
}
