package dev.cudawatch.simulator;

import dev.cudawatch.common.Topics;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
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
 * Sends the fleet straight to {@code cudawatch.logs} as agents would (records keyed by stream):
 * each rank's lines as {@code cudawatch run} wrapping it ships them, with the job, rank and GPU it
 * learnt from the rank's environment and where each came from; the node's kernel log and GPU
 * samples as the agent follows them; the jobs' exits. For benchmarks and tests that leave the
 * agents out.
 */
public final class KafkaOutput implements Consumer<SimLine>, AutoCloseable {
  private final KafkaProducer<byte[], byte[]> producer;
  private final Map<String, Long> offsets = new HashMap<>();
  private final String sourceId;
  private long sent;

  public KafkaOutput(String bootstrap, long seed) {
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
    LogRecord r = record(l, offset, sourceId);
    producer.send(
        new ProducerRecord<>(
            Topics.LOGS, r.streamKey().getBytes(StandardCharsets.UTF_8), WireJson.toBytes(r)));
    sent++;
  }

  /**
   * The wire record of one line. A rank's line is shipped as {@code cudawatch run} ships it (source
   * {@code run:JOB/rankN/stderr}, the rank's job, rank, GPU and their attribution); the node's own
   * lines as the agent ships what it follows.
   */
  public static LogRecord record(SimLine l, long offset, String sourceId) {
    LogRecord.Builder b =
        LogRecord.builder()
            .host(l.host())
            .kind(l.kind())
            .sourceId(sourceId)
            .offset(offset)
            .eventTime(Instant.ofEpochMilli(l.timeMillis()))
            // as the agent frames it: a progress bar's redraws collapse to the last one
            .text(l.text().substring(l.text().lastIndexOf('\r') + 1));
    RunIdentity w = l.who();
    if (w != null) {
      return b
          .job(w.job())
          .rank(w.rank())
          .localRank(w.localRank())
          .gpu(w.gpu())
          .gpuUuid(w.gpuUuid())
          .attribution(w.attribution())
          .stream("stderr")
          .source("run:" + w.job() + "/rank" + w.rank() + "/stderr")
          .build();
    }
    return b.job(l.job()).rank(l.rank()).localRank(l.rank()).gpu(l.gpu()).stream(
            l.kind() == RecordKind.LOG ? "stderr" : "file")
        .source("/sim/" + l.file())
        .build();
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
