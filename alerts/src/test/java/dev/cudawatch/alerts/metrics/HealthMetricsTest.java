package dev.cudawatch.alerts.metrics;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.WireJson;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Slow ranks, job step time, MTBI per GPU and node, and the repair ladder's rung, read from the
 * registry's exposition; job labels past the cap fold into "other".
 */
class HealthMetricsTest {
  private static final Instant T0 = Instant.parse("2026-11-22T03:00:00Z");

  private static Incident incident(
      String id, String cls, String host, Map<String, Object> f, Instant at) {
    return Incident.builder(id, cls)
        .severity("critical")
        .fields(f)
        .host(host)
        .job(f.containsKey("job") ? f.get("job").toString() : "job-9")
        .eventTime(at)
        .detectedTime(at)
        .build();
  }

  private static String scrape(PrometheusRegistry r) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    PrometheusTextFormatWriter.builder()
        .setIncludeCreatedTimestamps(false)
        .build()
        .write(out, r.scrape());
    return out.toString(StandardCharsets.UTF_8);
  }

  @Test
  void findingsBecomeMetrics() throws Exception {
    PrometheusRegistry r = new PrometheusRegistry();
    HealthMetrics m = new HealthMetrics(r, 2);
    m.incident(
        incident(
            "s1",
            "slow_rank",
            "node-b",
            Map.of("gpu", 1L, "rank", 5L, "peer_step_seconds", 0.5, "job", "job-1"),
            T0));
    m.incident(
        incident("d1", "job_slowdown", null, Map.of("step_seconds", 0.75, "job", "job-2"), T0));
    m.incident(
        incident("d2", "job_slowdown", null, Map.of("step_seconds", 2.0, "job", "job-3"), T0));
    for (int k = 0; k < 3; k++) {
      m.incident(
          incident("x" + k, "gpu_xid", "node-a", Map.of("gpu", 2L), T0.plusSeconds(600L * k)));
    }
    Map<String, String> labels =
        Map.of("alertname", "GpuRepairLadder", "host", "node-a", "gpu", "2", "pci", "0000:38:00");
    m.alert(
        new Alert(
            WireJson.VERSION,
            Alert.fingerprintOf(labels),
            Alert.State.FIRING,
            labels,
            Map.of("ladder_level", "1"),
            T0,
            null));
    String text = scrape(r);
    assertTrue(text.contains("cudawatch_slow_ranks_total{gpu=\"1\",host=\"node-b\"} 1.0"), text);
    assertTrue(text.contains("cudawatch_job_step_seconds{training_job=\"job-1\"} 0.5"), text);
    assertTrue(text.contains("cudawatch_job_step_seconds{training_job=\"job-2\"} 0.75"), text);
    assertTrue(
        text.contains("cudawatch_job_step_seconds{training_job=\"other\"} 2.0"), "capped: " + text);
    assertTrue(text.contains("cudawatch_gpu_mtbi_seconds{gpu=\"2\",host=\"node-a\"} 600.0"), text);
    assertTrue(text.contains("cudawatch_node_mtbi_seconds{host=\"node-a\"} 600.0"), text);
    assertTrue(
        text.contains(
            "cudawatch_gpu_repair_ladder_level{gpu=\"2\",host=\"node-a\",pci=\"0000:38:00\"} 1.0"),
        text);
  }
}
