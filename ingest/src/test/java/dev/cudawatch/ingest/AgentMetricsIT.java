package dev.cudawatch.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.Topics;
import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.ingest.ship.Shipper;
import dev.cudawatch.kafka.embedded.EmbeddedKafkaBroker;
import dev.cudawatch.kafka.embedded.KafkaBrokerExtension;
import dev.cudawatch.testkit.Await;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** The agent's metrics as scraped: the send latency histogram fed by real acknowledgements. */
class AgentMetricsIT {
  @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();

  @TempDir Path dir;

  @Test
  void eachAcknowledgedRecordIsOneLatencyObservation() throws Exception {
    EmbeddedKafkaBroker broker = KAFKA.broker();
    broker.createTopics(List.of(Topics.LOGS), 1);
    KafkaSettings kafka = new KafkaSettings(broker.bootstrapServers(), Map.of());
    try (Shipper shipper = new Shipper(kafka)) {
      Agent agent =
          new Agent(
              AgentSettings.builder()
                  .kafka(kafka)
                  .globs(List.of())
                  .stateDir(dir.resolve("state").toString())
                  .build(),
              shipper,
              Clock.systemUTC());
      AgentMetrics metrics = new AgentMetrics(agent, shipper, null, () -> 0);
      for (int i = 0; i < 3; i++) {
        shipper.send(
            LogRecord.builder()
                .host("n1")
                .source("/logs/a.log")
                .offset(i)
                .eventTime(Instant.now())
                .text("line " + i)
                .build(),
            () -> {});
      }
      shipper.flush();
      String text =
          Await.until(
              "three observations",
              () -> scrape(metrics),
              s -> s.contains("cudawatch_agent_send_latency_seconds_count 3"),
              Duration.ofSeconds(30));
      assertTrue(text.contains("# TYPE cudawatch_agent_send_latency_seconds histogram"), text);
      assertTrue(text.contains("cudawatch_agent_send_latency_seconds_bucket{le=\"+Inf\"} 3"));
      assertTrue(text.contains("cudawatch_agent_lag_bytes 0.0"), text);
    }
  }

  @Test
  void theLagSeriesAreTheFilesFurthestBehind() {
    Map<String, Long> lag = new HashMap<>();
    for (int i = 0; i < 50; i++) {
      lag.put("/logs/f" + i + ".log", (long) i);
    }
    Map<String, Long> top = AgentMetrics.topLag(lag, 10);
    assertEquals(10, top.size());
    assertEquals(List.of(49L, 48L, 47L), top.values().stream().limit(3).toList());
    assertEquals(List.of(), List.copyOf(AgentMetrics.topLag(Map.of("/idle.log", 0L), 10).keySet()));
  }

  private static String scrape(AgentMetrics m) {
    try {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      PrometheusTextFormatWriter.builder()
          .setIncludeCreatedTimestamps(false)
          .build()
          .write(out, m.registry().scrape());
      return out.toString(StandardCharsets.UTF_8);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
