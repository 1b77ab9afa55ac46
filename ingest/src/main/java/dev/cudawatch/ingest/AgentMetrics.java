package dev.cudawatch.ingest;

import dev.cudawatch.common.cli.BuildInfo;
import dev.cudawatch.common.gpu.MemorySample;
import dev.cudawatch.ingest.files.FileTailer;
import dev.cudawatch.ingest.ship.Shipper;
import dev.cudawatch.ingest.spool.DiskSpool;
import dev.cudawatch.ingest.streams.GpuMemorySampler;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.core.metrics.Info;
import io.prometheus.metrics.instrumentation.jvm.JvmBufferPoolMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmClassLoadingMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmCompilationMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmGarbageCollectorMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmMemoryMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmNativeMemoryMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmRuntimeInfoMetric;
import io.prometheus.metrics.instrumentation.jvm.JvmThreadsMetrics;
import io.prometheus.metrics.instrumentation.jvm.ProcessMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.Unit;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

/** The agent's own metrics, read from its parts when scraped. */
public final class AgentMetrics {
  /** Files listed one by one in the lag metric (those furthest behind). */
  static final int MAX_LAG_SERIES = 10;

  private final PrometheusRegistry registry = new PrometheusRegistry();

  public AgentMetrics(Agent agent, Shipper shipper, DiskSpool spool, LongSupplier streamLines) {
    // the JVM's and the process's own series (jvm_*, process_*), as every Java exporter has, all
    // of JvmMetrics' but jvm_memory_pool_allocated_bytes_total: it listens to every collection
    // (several a second at 10,000 lines/s), and the JVM builds each one's JMX notification on its
    // Notification thread, ~3 % of the agent's CPU (bench/results/profile-agent.md)
    JvmThreadsMetrics.builder().register(registry);
    JvmBufferPoolMetrics.builder().register(registry);
    JvmClassLoadingMetrics.builder().register(registry);
    JvmCompilationMetrics.builder().register(registry);
    JvmGarbageCollectorMetrics.builder().register(registry);
    JvmMemoryMetrics.builder().register(registry);
    JvmNativeMemoryMetrics.builder().register(registry);
    JvmRuntimeInfoMetric.builder().register(registry);
    ProcessMetrics.builder().register(registry);
    // which build this is, as Prometheus' own prometheus_build_info
    Info.builder()
        .name("cudawatch_build_info")
        .help("The build: version and git commit (value 1)")
        .labelNames("version", "revision")
        .register(registry)
        .addLabelValues(BuildInfo.current().version(), BuildInfo.current().revision());
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
        "cudawatch_agent_quiet_markers_total",
        "Markers shipped behind a file's last line once its writer paused (quiet_marker_ms)",
        agent::quietMarkers);
    counter(
        "cudawatch_agent_cri_malformed_lines_total",
        "Lines of files: entries with format cri not in the CRI format, shipped as they were",
        t::criMalformed);
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
              cb.call(shipper.dropped(), "rejected");
              cb.call(spool == null ? 0 : spool.dropped(), "spool_full");
              cb.call(spool == null ? 0 : spool.tornRecords(), "spool_torn");
            })
        .register(registry);
    counter(
        "cudawatch_agent_spool_torn_bytes_total",
        "Bytes of incomplete records skipped at the end of spool segments (crash, full disk)",
        () -> spool == null ? 0 : spool.tornBytes());
    counter(
        "cudawatch_agent_spool_cursor_resets_total",
        "Unreadable spool cursors: the spool was read again from its oldest segment",
        () -> spool == null ? 0 : spool.cursorResets());
    counter(
        "cudawatch_agent_files_closed_inactive_total",
        "Files closed after close_inactive_ms without growth (reopened when they grow)",
        t::closedInactive);
    counter(
        "cudawatch_agent_files_refused_total",
        "Links, pipes and devices matching a glob that were not read (each path once)",
        t::refused);
    counter(
        "cudawatch_agent_file_rewinds_total",
        "Files read again from their acknowledged position after a line failed",
        t::rewinds);
    GaugeWithCallback.builder()
        .name("cudawatch_agent_idle_files")
        .help("Files closed while idle, kept as a position only")
        .callback(cb -> cb.call(t.idleFiles()))
        .register(registry);
    if (shipper.deadLetters() != null) {
      CounterWithCallback.builder()
          .name("cudawatch_agent_dead_letters_total")
          .help("Records the broker rejected for good, kept under state_dir/dead-letters/")
          .labelNames("reason")
          .callback(
              cb -> {
                for (String r : List.of("too_large", "not_authorized", "invalid")) {
                  var n = shipper.deadLetters().counts().get(r);
                  cb.call(n == null ? 0 : n.get(), r);
                }
              })
          .register(registry);
    }
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
        .help(
            "Bytes of a file not yet acknowledged by the broker, for the "
                + MAX_LAG_SERIES
                + " files furthest behind (cudawatch_agent_lag_bytes sums every file)")
        .labelNames("path")
        .callback(cb -> topLag(t.lagBytes(), MAX_LAG_SERIES).forEach((p, b) -> cb.call(b, p)))
        .register(registry);
    GaugeWithCallback.builder()
        .name("cudawatch_agent_lag_bytes")
        .help("Bytes of every followed file not yet acknowledged by the broker")
        .callback(cb -> cb.call(t.lagBytes().values().stream().mapToLong(Long::longValue).sum()))
        .register(registry);
    Histogram latency =
        Histogram.builder()
            .name("cudawatch_agent_send_latency_seconds")
            .unit(Unit.SECONDS)
            .help("Time from sending a record to the broker's acknowledgement")
            .classicUpperBounds(
                0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)
            // observed per record: exemplars and native buckets cost ~6 % of the agent (JFR)
            .classicOnly()
            .withoutExemplars()
            .register(registry);
    shipper.observeLatency(nanos -> latency.observe(nanos / 1e9));
  }

  /**
   * The {@code n} files with the most unacknowledged bytes (ties by path), so the series stay
   * bounded and name the files that matter; files with nothing pending are left out.
   */
  static Map<String, Long> topLag(Map<String, Long> lag, int n) {
    Map<String, Long> top = new LinkedHashMap<>();
    lag.entrySet().stream()
        .filter(e -> e.getValue() > 0)
        .sorted(
            Map.Entry.<String, Long>comparingByValue()
                .reversed()
                .thenComparing(Map.Entry.comparingByKey()))
        .limit(n)
        .forEach(e -> top.put(e.getKey(), e.getValue()));
    return top;
  }

  /** The runtime's own: records lost to spool write errors, and health. */
  void register(AgentRuntime runtime) {
    counter(
        "cudawatch_agent_spool_write_errors_total",
        "Records of stream sources lost because the spool could not be written",
        runtime::spoolErrors);
    counter(
        "cudawatch_agent_nvidia_smi_timeouts_total",
        "nvidia-smi runs killed at their deadline (a wedged GPU); /healthz warns, stays ok",
        () -> runtime.nvidiaSmiHealth().timeouts());
    counter(
        "cudawatch_agent_kmsg_spool_retries_total",
        "Kernel records offered to the spool again after a failed write (full disk); none lost",
        () -> runtime.kernelSource() == null ? 0 : runtime.kernelSource().spoolRetries());
    counter(
        "cudawatch_agent_kmsg_cursor_resets_total",
        "Unreadable kernel log cursors (corrupt, newer format): this boot's records were read again",
        () -> runtime.kernelSource() == null ? 0 : runtime.kernelSource().cursorResets());
    // the kernel source starts after the endpoint, so it is looked up at each scrape
    CounterWithCallback.builder()
        .name("cudawatch_agent_kmsg_pid_joins_total")
        .help(
            "Kernel lines naming a pid (Xid pid=N, the OOM killer's victim), by how joining the"
                + " process's job, rank and GPU from its environment ended: joined, gone, unreadable,"
                + " no_job, slow (the read did not answer in time)")
        .labelNames("result")
        .callback(
            cb -> {
              var k = runtime.kernelSource();
              Map<String, Long> n = k == null ? Map.of() : k.pidJoins();
              for (var r : dev.cudawatch.ingest.attribution.KernelPidJoin.Result.values()) {
                cb.call(n.getOrDefault(r.label(), 0L), r.label());
              }
            })
        .register(registry);
    GaugeWithCallback.builder()
        .name("cudawatch_agent_healthy")
        .help("1 when every source runs and the spool can be written, else 0 (see /healthz)")
        .callback(cb -> cb.call(runtime.problems().isEmpty() ? 1 : 0))
        .register(registry);
    // the handoff starts after the endpoint, so it is looked up at each scrape
    CounterWithCallback.builder()
        .name("cudawatch_agent_run_spools_refused_total")
        .help(
            "Run spool paths refused (link, owner, unreadable, version: each once) and spooled"
                + " records that were not records (malformed)")
        .labelNames("reason")
        .callback(
            cb -> {
              var runSpools = runtime.runSpools();
              if (runSpools != null) {
                runSpools.refused().forEach((k, v) -> cb.call(v, k));
              }
            })
        .register(registry);
    counter(
        "cudawatch_agent_run_spools_adopted_total",
        "Spools of finished runs moved into the agent's spool and removed",
        () -> runtime.runSpools() == null ? 0 : runtime.runSpools().adopted());
    counter(
        "cudawatch_agent_run_spool_host_mismatches_total",
        "Spooled records naming another host than this agent's (shipped with the agent's)",
        () -> runtime.runSpools() == null ? 0 : runtime.runSpools().hostMismatches());
    // continuous GPU memory per device (the alerts service has it only at leak warnings); the
    // sampler starts after the endpoint, so it is looked up at each scrape
    gpuGauge(
        "cudawatch_agent_gpu_memory_used_bytes",
        "GPU memory in use at the latest nvidia-smi sample",
        runtime::gpuSampler,
        MemorySample::usedBytes);
    gpuGauge(
        "cudawatch_agent_gpu_memory_capacity_bytes",
        "GPU memory of the device (nvidia-smi memory.total)",
        runtime::gpuSampler,
        MemorySample::totalBytes);
  }

  /** Attribution's lookups, by counter name ({@link AttributionSources#counters()}). */
  /** The attribution sources open after the endpoint: looked up at each scrape. */
  void attribution(java.util.function.Supplier<Map<String, LongSupplier>> countersNow) {
    CounterWithCallback.builder()
        .name("cudawatch_agent_attribution_total")
        .help(
            "Attribution lookups (lookups_*), their timeouts and failures, lookups refused by a"
                + " full queue, Slurm sidecars refused for a path their job's user does not own"
                + " (sidecars_refused), lines shipped before their file's attribution was known, and new"
                + " files whose first line waited for it")
        .labelNames("what")
        .callback(
            cb -> {
              Map<String, LongSupplier> counters = countersNow.get();
              if (counters != null) {
                counters.forEach((what, n) -> cb.call(n.getAsLong(), what));
              }
            })
        .register(registry);
  }

  private void gpuGauge(
      String name,
      String help,
      java.util.function.Supplier<GpuMemorySampler> samplerNow,
      java.util.function.ToLongFunction<MemorySample> value) {
    GaugeWithCallback.builder()
        .name(name)
        .unit(Unit.BYTES)
        .help(help)
        .labelNames("gpu")
        .callback(
            cb -> {
              GpuMemorySampler sampler = samplerNow.get();
              if (sampler == null) {
                return; // sampling off, or not started yet
              }
              for (MemorySample m : sampler.latest()) {
                cb.call(value.applyAsLong(m), Integer.toString(m.gpu()));
              }
            })
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
