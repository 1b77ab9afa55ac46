package dev.cudawatch.alerts.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.alerts.AlertsSettings;
import dev.cudawatch.common.wire.Incident;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The incident label names and the lemon score the incident page reads. */
class AlertsMetricsTest {
  private static final Instant T0 = Instant.parse("2026-11-22T03:00:00Z");

  private static Incident illegal(String id, String job) {
    return Incident.builder(id, "illegal_memory_access")
        .severity("error")
        .suspect("application")
        .host("n1")
        .job(job)
        .fields(Map.of("gpu", 3L))
        .eventTime(T0)
        .detectedTime(T0)
        .build();
  }

  @Test
  void anAllowedJobIsTheTrainingJobLabelNotPrometheusJob() throws IOException {
    AlertsSettings s = AlertsSettings.builder().allowedJobLabels(List.of("train-1")).build();
    AlertsMetrics m = new AlertsMetrics(s.metricLimits());
    m.incident(illegal("a", "train-1"), T0);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    PrometheusTextFormatWriter.builder()
        .setIncludeCreatedTimestamps(false)
        .build()
        .write(out, m.registry().scrape());
    String text = out.toString(StandardCharsets.UTF_8);
    assertTrue(text.contains("training_job=\"train-1\""), text);
    assertFalse(text.contains(",job=\""), text);
  }

  @Test
  void theLemonScoreOfAGpuCountsDifferentJobsInTheWindow() {
    AlertsMetrics m = new AlertsMetrics(AlertsSettings.defaults().metricLimits());
    m.incident(illegal("a", "j1"), T0);
    m.incident(illegal("b", "j2"), T0.plusSeconds(60));
    m.incident(illegal("c", "j2"), T0.plusSeconds(120));
    assertEquals(2, m.lemonScore("n1", "3", T0.plusSeconds(180)));
    assertEquals(0, m.lemonScore("n1", "0", T0.plusSeconds(180)));
    assertEquals(0, m.lemonScore("n1", "3", T0.plusSeconds(25 * 3600)));
  }
}
