package dev.cudawatch.ingest.ship;

import dev.cudawatch.common.Topics;
import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.WireJson;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.RecordBatchTooLargeException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends log records with {@code acks=all} and idempotence. Records of one stream share a key, so
 * they stay in order on one partition and their acknowledgements come back in order: a file's
 * position advances only past lines the broker has. While the broker is away, the producer keeps
 * retrying and {@code send} blocks once its buffer is full: back-pressure, not loss.
 *
 * <p>A record the broker rejects for good (too large, not authorized, invalid) is never skipped: it
 * goes to the {@link DeadLetters} with its reason and only then counts as handled; if it cannot be
 * kept there, the sender is told it failed and sends it again later.
 */
public final class Shipper implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Shipper.class);

  private final KafkaProducer<byte[], byte[]> producer;
  private final AtomicLong sent = new AtomicLong();
  private final AtomicLong bytes = new AtomicLong();
  private final AtomicLong dropped = new AtomicLong();
  private final AtomicLong failed = new AtomicLong();
  private final AtomicLong latencyNanos = new AtomicLong();
  private volatile LongConsumer latencyObserver = n -> {};
  private final DeadLetters deadLetters;
  private final InFlightBytes inFlight = new InFlightBytes(IN_FLIGHT_BYTES);
  private volatile boolean closed;

  /**
   * Record bytes (before compression) sent and not yet acknowledged: see {@link InFlightBytes}. 1
   * MiB, not 2: at 10,000 lines/s over 100 files, 2 MiB of records outlived a young collection and
   * overflowed the 2 MB survivor spaces, so they were promoted: 7-14 full collections in 35 s
   * against 1-2, and ~4 MB more heap. Catching up on one file is no slower (AgentThroughput,
   * bench/results/profile-agent.md).
   */
  static final int IN_FLIGHT_BYTES = 1 << 20;

  /** A shipper without a dead-letter store: rejected records are logged and counted as dropped. */
  public Shipper(KafkaSettings kafka) {
    this(kafka, null);
  }

  public Shipper(KafkaSettings kafka, DeadLetters deadLetters) {
    this.deadLetters = deadLetters;
    Map<String, Object> p = new HashMap<>();
    p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
    // A batch takes batch.size from the producer's pool however little a linger lets into it, and
    // the pool keeps what it gave: at 10,000 lines/s over 100 files, 256 KiB batches of a few lines
    // held megabytes of a small heap. 64 KiB of lz4 still carries ~800 training-log lines.
    p.put(ProducerConfig.BATCH_SIZE_CONFIG, 64 * 1024);
    p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
    // compressed batches; what the heap holds for records in flight is bounded by InFlightBytes
    p.put(ProducerConfig.BUFFER_MEMORY_CONFIG, 4L << 20);
    p.putAll(kafka.properties()); // the operator's settings win, except the guarantees below
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    // One request in flight per broker: with several, two requests to a partition the broker is
    // just creating (an auto-created topic) can be handled out of order, and the first one then
    // fails OUT_OF_ORDER_SEQUENCE_NUMBER for ever (KAFKA-15591, fixed in brokers from 4.5 only):
    // with no delivery timeout that wedges the partition. Seen in the compose stack; one request
    // (up to max.request.size, a batch per partition) is enough for a node.
    p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1);
    p.put(
        ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG,
        Integer.MAX_VALUE); // retry while the broker is away
    p.putIfAbsent(
        ProducerConfig.MAX_BLOCK_MS_CONFIG, Long.MAX_VALUE); // back-pressure unless configured
    // A batch the broker refuses as too large is split and retried by the producer, and with
    // idempotence and several batches in flight that can wedge it in OUT_OF_ORDER_SEQUENCE retries
    // forever (seen with Kafka 4.2). So nothing may reach the broker larger than max.request.size
    // (set it to the topic's max.message.bytes when that is smaller than 1 MiB): a larger record is
    // refused by the producer itself, before it is sequenced, and goes to the dead letters.
    int maxRequest =
        Integer.parseInt(
            String.valueOf(p.getOrDefault(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, 1 << 20)));
    int batch = Integer.parseInt(String.valueOf(p.get(ProducerConfig.BATCH_SIZE_CONFIG)));
    p.put(ProducerConfig.BATCH_SIZE_CONFIG, Math.min(batch, maxRequest));
    producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
    // the first record shipped would otherwise wait ~0.2 s for Jackson to introspect its type
    WireJson.warmUpInBackground();
  }

  /** Sends a record; {@code onAck} runs on the producer's thread once the broker has it. */
  public void send(LogRecord r, Runnable onAck) {
    send(r, onAck, () -> {});
  }

  /** As {@link #send(LogRecord, Runnable)}, telling {@code onFailure} when the send failed. */
  public void send(LogRecord r, Runnable onAck, Runnable onFailure) {
    sendRaw(KEYS.get().of(r), WireJson.toBytes(r), onAck, onFailure);
  }

  private static final ThreadLocal<StreamKeys> KEYS = ThreadLocal.withInitial(StreamKeys::new);

  /**
   * The last stream key a thread sent, kept: a followed file's lines share their host, source,
   * source id and stream (the same strings), so the key is built and encoded once per run of them
   * instead of once per line. Keys are read only by the producer, which copies them into its batch.
   */
  private static final class StreamKeys {
    private String host;
    private String source;
    private String sourceId;
    private String stream;
    private byte[] key;

    byte[] of(LogRecord r) {
      if (key == null
          || r.host() != host
          || r.source() != source
          || r.sourceId() != sourceId
          || r.stream() != stream) {
        host = r.host();
        source = r.source();
        sourceId = r.sourceId();
        stream = r.stream();
        key = r.streamKey().getBytes(StandardCharsets.UTF_8);
      }
      return key;
    }
  }

  /** Sends an already-serialised record (from the spool) under its stream key. */
  public void sendRaw(byte[] key, byte[] value, Runnable onAck) {
    sendRaw(key, value, onAck, () -> {});
  }

  /**
   * As {@link #sendRaw(byte[], byte[], Runnable)}, telling {@code onFailure} when the record was
   * neither acknowledged nor kept as a dead letter: the caller must send it again.
   */
  public void sendRaw(byte[] key, byte[] value, Runnable onAck, Runnable onFailure) {
    if (closed) {
      // a source still running at shutdown: its record stays unacknowledged, read again next start
      throw new IllegalStateException("the shipper is closed");
    }
    int held = inFlight.take(value.length, () -> closed);
    long t0 = System.nanoTime();
    boolean[] given = {false};
    try {
      producer.send(
          new ProducerRecord<>(Topics.LOGS, key, value),
          (meta, e) -> {
            given[0] = true;
            inFlight.give(held);
            if (e == null) {
              sent.incrementAndGet();
              bytes.addAndGet(value.length);
              long took = System.nanoTime() - t0;
              latencyNanos.addAndGet(took);
              latencyObserver.accept(took);
              onAck.run();
              return;
            }
            String reason = permanentReason(e);
            if (reason != null && deadLetters == null) {
              dropped.incrementAndGet();
              LOG.warn("record rejected by the broker ({}), dropped: {}", reason, e.toString());
              onAck.run();
            } else if (reason != null && deadLetters.put(reason, e.toString(), key, value)) {
              onAck.run(); // kept on disk with its reason: the position may pass it
            } else {
              failed.incrementAndGet();
              onFailure.run();
              LOG.warn("send failed, will retry: {}", e.toString());
            }
          });
    } catch (RuntimeException e) {
      if (!given[0]) {
        inFlight.give(held); // refused before it was queued: no callback will give them back
      }
      throw e;
    }
  }

  /** The dead-letter reason of an error no retry can fix, or null for one worth retrying. */
  static String permanentReason(Exception e) {
    if (e instanceof RecordTooLargeException || e instanceof RecordBatchTooLargeException) {
      return "too_large";
    }
    if (e instanceof AuthorizationException) {
      return "not_authorized";
    }
    if (e instanceof InvalidRecordException) {
      return "invalid";
    }
    return null;
  }

  public DeadLetters deadLetters() {
    return deadLetters;
  }

  /** Tells {@code nanos} each acknowledged record's time from send to acknowledgement. */
  public void observeLatency(LongConsumer nanos) {
    this.latencyObserver = nanos;
  }

  /** Total time from send to acknowledgement, over {@link #sent()} records. */
  public long latencyNanos() {
    return latencyNanos.get();
  }

  /** Waits for every record sent so far to be acknowledged or failed; nothing once closed. */
  public void flush() {
    if (!closed) {
      producer.flush();
    }
  }

  /** True once {@link #close} began: sources must stop sending. */
  public boolean closed() {
    return closed;
  }

  public long sent() {
    return sent.get();
  }

  public long bytesSent() {
    return bytes.get();
  }

  public long dropped() {
    return dropped.get();
  }

  public long failed() {
    return failed.get();
  }

  @Override
  public void close() {
    close(Duration.ofSeconds(30));
  }

  /**
   * Sends what is buffered for up to {@code timeout}, then fails the rest (their senders are told,
   * so nothing unacknowledged counts as shipped) and closes. A send blocked waiting for a broker
   * that is away is woken with an exception.
   */
  public void close(Duration timeout) {
    closed = true;
    producer.close(timeout);
  }
}
