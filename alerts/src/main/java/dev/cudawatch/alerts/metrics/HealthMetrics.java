package dev.cudawatch.alerts.metrics;

import dev.cudawatch.alerts.store.GpuHealthStore;
import dev.cudawatch.alerts.store.JobFailureStore;
import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.Incident;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Fleet-health metrics from the processor's findings: each job's step time (from its slow-rank and
 * slowdown findings), slow ranks found per host and GPU, mean time between failures per GPU and per
 * node (from the failures the lemon score counts), and each GPU's rung on the repair ladder (from
 * {@code GpuRepairLadder} alerts). Every label combination is capped like the other metrics, and
 * the failure history is bounded to {@code maxSeries} GPUs and nodes. The service calls it once per
 * incident (its store drops re-deliveries).
 */
public final class HealthMetrics {
  private final Gauge jobStep;
  private final Counter slowRanks;
  private final Gauge gpuMtbi;
  private final Gauge nodeMtbi;
  private final Gauge ladder;
  private final SeriesLimiter jobSeries;
  private final SeriesLimiter gpuSeries;
  private final SeriesLimiter nodeSeries;
  private final int maxSeries;
  private final Map<String, long[]> failures; // {first ms, last ms, count}, bounded, oldest out

  public HealthMetrics(PrometheusRegistry registry, int maxSeries) {
    this.maxSeries = maxSeries;
    Counter capped =
        Counter.builder()
            .name("cudawatch_health_series_capped_total")
            .help("Fleet-health label combinations folded into 'other' by the cardinality cap")
            .labelNames("metric")
            .register(registry);
    this.failures =
        new LinkedHashMap<>(16, 0.75f, true) {
          @Override
          protected boolean removeEldestEntry(Map.Entry<String, long[]> e) {
            return size() > 2 * HealthMetrics.this.maxSeries;
          }
        };
    jobStep =
        Gauge.builder()
            .name("cudawatch_job_step_seconds")
            .help(
                "A job's step time at its latest slow-rank or slowdown finding (its ranks' median)")
            .labelNames("training_job")
            .register(registry);
    slowRanks =
        Counter.builder()
            .name("cudawatch_slow_ranks_total")
            .help("Ranks found persistently slower than their job's other ranks, by host and GPU")
            .labelNames("host", "gpu")
            .register(registry);
    gpuMtbi =
        Gauge.builder()
            .name("cudawatch_gpu_mtbi_seconds")
            .help("Mean time between failures of one GPU (from its second failure on)")
            .labelNames("host", "gpu")
            .register(registry);
    nodeMtbi =
        Gauge.builder()
            .name("cudawatch_node_mtbi_seconds")
            .help("Mean time between GPU failures of one node (from its second failure on)")
            .labelNames("host")
            .register(registry);
    ladder =
        Gauge.builder()
            .name("cudawatch_gpu_repair_ladder_level")
            .help("A GPU's rung on the repair ladder: 1 inspect the hardware, 2 RMA")
            .labelNames("host", "gpu", "pci")
            .register(registry);
    jobSeries =
        new SeriesLimiter(
            maxSeries,
            new boolean[] {true},
            v -> capped.labelValues("cudawatch_job_step_seconds").inc());
    gpuSeries =
        new SeriesLimiter(
            maxSeries,
            new boolean[] {true, true},
            v -> capped.labelValues("cudawatch_gpu_health").inc());
    nodeSeries =
        new SeriesLimiter(
            maxSeries,
            new boolean[] {true},
            v -> capped.labelValues("cudawatch_node_mtbi_seconds").inc());
  }

  /** The GPU health store's size, evictions and re-read recommendations, read at each scrape. */
  public static void watch(PrometheusRegistry registry, GpuHealthStore gpus) {
    GaugeWithCallback.builder()
        .name("cudawatch_gpu_health_states")
        .help("GPUs whose latest health recommendation is held for the incident page and API")
        .callback(cb -> cb.call(gpus.size()))
        .register(registry);
    CounterWithCallback.builder()
        .name("cudawatch_gpu_health_evicted_total")
        .help("GPUs forgotten by the health store to stay within max_gpus (the oldest first)")
        .callback(cb -> cb.call(gpus.evicted()))
        .register(registry);
    CounterWithCallback.builder()
        .name("cudawatch_gpu_health_duplicates_total")
        .help("Recommendations read again (after a restart) and ignored")
        .callback(cb -> cb.call(gpus.duplicates()))
        .register(registry);
  }

  /** The job-failure store's size and evictions, read at each scrape. */
  public static void watch(PrometheusRegistry registry, JobFailureStore jobs) {
    GaugeWithCallback.builder()
        .name("cudawatch_job_failures_held")
        .help("Failed jobs held for the incident page and /api/jobs")
        .callback(cb -> cb.call(jobs.size()))
        .register(registry);
    CounterWithCallback.builder()
        .name("cudawatch_job_failures_evicted_total")
        .help("Failed jobs forgotten to stay within max_job_failures (the oldest first)")
        .callback(cb -> cb.call(jobs.evicted()))
        .register(registry);
  }

  public synchronized void incident(Incident i) {
    if (!i.root() || i.verdict() != null) {
      return; // a verdict re-publishes an incident already counted
    }
    Object gpu = i.fields().get("gpu");
    String host = i.host() == null ? "unknown" : i.host();
    String g = gpu == null ? "unknown" : gpu.toString();
    switch (i.incidentClass()) {
      case "slow_rank" -> {
        slowRanks.labelValues(gpuSeries.admit(host, g)).inc();
        step(i.job(), i.fields().get("peer_step_seconds"));
      }
      case "job_slowdown" -> step(i.job(), i.fields().get("step_seconds"));
      default -> {
        if (LemonScores.COUNTED.contains(i.incidentClass()) && i.host() != null) {
          Instant at = i.eventTime() != null ? i.eventTime() : i.detectedTime();
          if (gpu != null) {
            set(gpuMtbi, gpuSeries.admit(host, g), fail("gpu|" + host + "|" + g, at));
          }
          set(nodeMtbi, nodeSeries.admit(host), fail("node|" + host, at));
        }
      }
    }
  }

  public synchronized void alert(Alert a) {
    if (!"GpuRepairLadder".equals(a.alertName())) {
      return;
    }
    String level = a.annotations().get("ladder_level");
    if (a.state() == Alert.State.FIRING && level != null) {
      String[] hg = gpuSeries.admit(a.labels().get("host"), a.labels().get("gpu"));
      ladder
          .labelValues(hg[0], hg[1], a.labels().getOrDefault("pci", "unknown"))
          .set(Double.parseDouble(level));
    }
  }

  private void step(String job, Object seconds) {
    if (job != null && seconds instanceof Number n) {
      jobStep.labelValues(jobSeries.admit(job)).set(n.doubleValue());
    }
  }

  /** Records a failure; returns the mean time between failures so far, or NaN before two. */
  private double fail(String key, Instant at) {
    long t = at.toEpochMilli();
    long[] f = failures.computeIfAbsent(key, k -> new long[] {t, t, 0});
    f[0] = Math.min(f[0], t);
    f[1] = Math.max(f[1], t);
    f[2]++;
    return f[2] < 2 ? Double.NaN : (f[1] - f[0]) / 1000.0 / (f[2] - 1);
  }

  private static void set(Gauge g, String[] labels, double v) {
    if (!Double.isNaN(v)) {
      g.labelValues(labels).set(v);
    }
  }
}
