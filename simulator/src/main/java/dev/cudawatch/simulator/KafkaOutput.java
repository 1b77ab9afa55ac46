package dev.cudawatch.simulator;

import dev.cudawatch.common.Topics;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.WireJson;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Sends the fleet straight to {@code cudawatch.logs} as agents would (records keyed by stream, with
 * host, job, rank and GPU metadata and the exits `cudawatch run` reports), for benchmarks that
 * leave the agents out.
 */
final class KafkaOutput implements Consumer<SimLine>, AutoCloseable {
  private final KafkaProducer<byte[], byte[]> producer;
  private final Map<String, Long> offsets = new HashMap<>();
  private final String sourceId;
  private long sent;

  KafkaOutput(String bootstrap, long seed) {
    this.producer =
        new KafkaProducer<>(
            Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                bootstrap,
                ProducerConfig.ACKS_CONFIG,
                "all",
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG,
                true,
                ProducerConfig.LINGER_MS_CONFIG,
                5,
                ProducerConfig.COMPRESSION_TYPE_CONFIG,
                "lz4"),
            new ByteArraySerializer(),
            new ByteArraySerializer());
    this.sourceId = "sim-" + seed;
  }

  @Override
  public void accept(SimLine l) {
    long offset = offsets.merge(l.file(), 1L, Long::sum) - 1;
    LogRecord r =
        LogRecord.builder()
            .host(l.host())
            .job(l.job())
            .rank(l.rank())
            .localRank(l.rank())
            .gpu(l.gpu())
            .kind(l.kind())
            .stream(l.kind() == dev.cudawatch.common.wire.RecordKind.LOG ? "stderr" : "file")
            .source("/sim/" + l.file())
            .sourceId(sourceId)
            .offset(offset)
            .eventTime(Instant.ofEpochMilli(l.timeMillis()))
            // as the agent frames it: a progress bar's redraws collapse to the last one
            .text(l.text().substring(l.text().lastIndexOf('\r') + 1))
            .build();
    producer.send(
        new ProducerRecord<>(
            Topics.LOGS, r.streamKey().getBytes(StandardCharsets.UTF_8), WireJson.toBytes(r)));
    sent++;
  }

  long sent() {
    return sent;
  }

  @Override
  public void close() {
    producer.flush();
    producer.close();
  }
}
