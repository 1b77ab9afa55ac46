package dev.cudawatch.ingest;

import dev.cudawatch.ingest.files.FileTailer;
import dev.cudawatch.ingest.ship.Shipper;
import dev.cudawatch.ingest.spool.DiskSpool;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.Map;
import java.util.function.LongSupplier;

/** The agent's own metrics, read from its parts when scraped. */
public final class AgentMetrics {
  /** Files listed one by one in the lag metric; beyond, they are summed under "other". */
  static final int MAX_LAG_SERIES = 100;

  private final PrometheusRegistry registry = new PrometheusRegistry();

  public AgentMetrics(Agent agent, Shipper shipper, DiskSpool spool, LongSupplier streamLines) {
    FileTailer t = agent.tailer();
    CounterWithCallback.builder()
        .name("cudawatch_agent_lines_read_total")
        .help("Lines read, by kind of source")
        .labelNames("source")
        .callback(
            cb -> {
              cb.call(agent.linesRead(), "files");
              cb.call(streamLines.getAsLong(), "streams");
            })
        .register(registry);
    counter("cudawatch_agent_records_sent_total", "Records the broker acknowledged", shipper::sent);
    counter(
        "cudawatch_agent_bytes_sent_total",
        "Bytes of records the broker acknowledged",
        shipper::bytesSent);
    counter(
        "cudawatch_agent_lines_truncated_total",
        "Lines longer than max_line_bytes, cut with a marker",
        agent::truncatedLines);
    counter(
        "cudawatch_agent_rotations_total",
        "Files renamed away or deleted, drained before release",
        t::rotations);
    counter(
        "cudawatch_agent_truncations_total",
        "Files truncated or replaced in place, read again from byte 0",
        t::truncations);
    counter(
        "cudawatch_agent_rotated_copies_claimed_total",
        "Rotated copies (copytruncate, renamed while down) read on as the stream they came from",
        t::recovered);
    counter(
        "cudawatch_agent_unreadable_total",
        "Files or directories that could not be read",
        t::unreadable);
    counter(
        "cudawatch_agent_send_failures_total",
        "Sends that failed and will be retried from the checkpoint",
        shipper::failed);
    CounterWithCallback.builder()
        .name("cudawatch_agent_dropped_total")
        .help("Records dropped, by reason")
        .labelNames("reason")
        .callback(
            cb -> {
              cb.call(shipper.dropped(), "too_large");
              cb.call(spool == null ? 0 : spool.dropped(), "spool_full");
            })
        .register(registry);
    GaugeWithCallback.builder()
        .name("cudawatch_agent_spool_bytes")
        .help("Bytes waiting in the disk spool")
        .callback(cb -> cb.call(spool == null ? 0 : spool.totalBytes()))
        .register(registry);
    GaugeWithCallback.builder()
        .name("cudawatch_agent_open_files")
        .help("Files followed now")
        .callback(cb -> cb.call(t.openFiles()))
        .register(registry);
    GaugeWithCallback.builder()
        .name("cudawatch_agent_file_lag_bytes")
        .help("Bytes of a file not yet acknowledged by the broker")
        .labelNames("path")
        .callback(
            cb -> {
              Map<String, Long> lag = t.lagBytes();
              long other = 0;
              int n = 0;
              for (var e : lag.entrySet()) {
                if (n++ < MAX_LAG_SERIES) {
                  cb.call(e.getValue(), e.getKey());
                } else {
                  other += e.getValue();
                }
              }
              if (n > MAX_LAG_SERIES) {
                cb.call(other, "other");
              }
            })
        .register(registry);
    GaugeWithCallback.builder()
        .name("cudawatch_agent_send_latency_seconds_avg")
        .help("Mean time from send to broker acknowledgement")
        .callback(
            cb -> cb.call(shipper.sent() == 0 ? 0 : shipper.latencyNanos() / 1e9 / shipper.sent()))
        .register(registry);
  }

  private void counter(String name, String help, LongSupplier value) {
    CounterWithCallback.builder()
        .name(name)
        .help(help)
        .callback(cb -> cb.call(value.getAsLong()))
        .register(registry);
  }

  public PrometheusRegistry registry() {
    return registry;
  }
}
