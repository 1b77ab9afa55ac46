package dev.cudawatch.launcher;

import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.ingest.ship.Shipper;
import java.time.Instant;

/**
 * Runs the first stretch of every line's path before {@code local} reports started: quiet markers
 * for a stream of its own go through the agent's shipper (its connection, producer id, batches) and
 * the job (the source, parsing, the keyed exchange, the classifier's state lookup). A marker on a
 * stream with nothing open is one the job stores and emits nothing for (ClassifyStreamTest), and
 * the rules that watch a job's output ignore markers, so nothing of it is visible. Measured with
 * bench/run's first probe (latency-trace.md): 2,000 markers did as well as 30,000 classified lines,
 * which would leave a stream's state behind.
 */
final class JobWarmup {
  static final String SOURCE = "cudawatch-local-warmup";

  private JobWarmup() {}

  /** Sends {@code markers} markers and waits until the broker has them all. */
  static void send(Shipper shipper, String host, int markers) {
    Instant at = Instant.now();
    LogRecord stream =
        LogRecord.builder().host(host).source(SOURCE).stream("file").eventTime(at).text("").build();
    for (int i = 0; i < markers; i++) {
      shipper.send(stream.quietAt(i + 1L, at), () -> {});
    }
    shipper.flush();
  }
}
