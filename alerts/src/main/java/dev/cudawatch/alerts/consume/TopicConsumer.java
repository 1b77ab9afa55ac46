package dev.cudawatch.alerts.consume;

import dev.cudawatch.alerts.metrics.AlertsMetrics;
import dev.cudawatch.common.Topics;
import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.common.wire.Action;
import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.DeadLetter;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.JobFailure;
import dev.cudawatch.common.wire.WireFormatException;
import dev.cudawatch.common.wire.WireJson;
import java.time.Clock;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads committed incidents, alerts, actions (the GPU health ledger's recommendations) and job
 * failures (a failed job's culprit rank and its evidence). A record it cannot read goes to the
 * dead-letter topic with the reason, and is counted; the loop keeps running. Offsets are committed
 * only after a batch was handled and made durable ({@code afterBatch}); any failure (a broker
 * outage past a timeout, a full disk) is counted, leaves the offsets uncommitted, and is retried
 * with a back-off: the loop ends only at {@link #close()}.
 */
public final class TopicConsumer implements Runnable, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(TopicConsumer.class);

  private final KafkaConsumer<byte[], byte[]> consumer;
  private final KafkaProducer<byte[], byte[]> deadLetters;
  private final AlertsMetrics metrics;
  private final Consumer<Incident> onIncident;
  private final Consumer<Alert> onAlert;
  private final Consumer<Action> onAction;
  private final Consumer<JobFailure> onJobFailure;
  private final Runnable afterBatch;
  private long lagCheckedAt = System.nanoTime() - 5_000_000_000L;
  private final Clock clock;
  private volatile boolean assigned;
  private volatile boolean running = true;
  private volatile State state = State.STARTING;
  private volatile java.time.Instant since;
  private volatile String lastError;
  private volatile long uncommitted;
  // handled records whose offsets wait for the caller to make them durable
  private final Map<TopicPartition, OffsetAndMetadata> pending = new HashMap<>();

  public TopicConsumer(
      KafkaSettings kafka,
      String groupId,
      AlertsMetrics metrics,
      Consumer<Incident> onIncident,
      Consumer<Alert> onAlert,
      Consumer<Action> onAction,
      Consumer<JobFailure> onJobFailure,
      Runnable afterBatch,
      Clock clock) {
    this.afterBatch = afterBatch;
    Map<String, Object> c = new HashMap<>(kafka.properties());
    c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
    c.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
    c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    c.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 1000);
    // committed here, after the notifier made the batch durable; never by poll() or close()
    c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    // incidents and alerts are few: a broker-side wait of 500 ms (the default) would be most of
    // their latency, so fetches return sooner; a site can still override it
    c.putIfAbsent(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 50);
    consumer = new KafkaConsumer<>(c, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    Map<String, Object> p = new HashMap<>(kafka.properties());
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    // a dead letter during a broker outage fails fast and its record is read again, rather than
    // holding the consumer loop for a minute
    p.putIfAbsent(ProducerConfig.MAX_BLOCK_MS_CONFIG, 5_000);
    deadLetters = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
    this.metrics = metrics;
    this.onIncident = onIncident;
    this.onAlert = onAlert;
    this.onAction = onAction;
    this.onJobFailure = onJobFailure;
    this.clock = clock;
    this.since = clock.instant();
  }

  /** What the consumer is doing, for /healthz. */
  public enum State {
    STARTING,
    CONSUMING,
    RETRYING,
    STOPPED
  }

  /** True once the consumer owns its partitions, while its loop runs (a broker outage included). */
  public boolean ready() {
    return assigned && state != State.STOPPED;
  }

  public State state() {
    return state;
  }

  /** The state, since when, and the last error while retrying: the consumer's part of /healthz. */
  public Map<String, Object> details() {
    Map<String, Object> d = new LinkedHashMap<>();
    d.put("state", state.name().toLowerCase(java.util.Locale.ROOT));
    d.put("since", since.toString());
    if (state == State.RETRYING && lastError != null) {
      d.put("last_error", lastError);
    }
    d.put("uncommitted_records", uncommitted);
    return d;
  }

  private void state(State s, String error) {
    if (state != s) {
      state = s;
      since = clock.instant();
    }
    lastError = error;
  }

  @Override
  public void run() {
    int failures = 0;
    try {
      consumer.subscribe(
          List.of(Topics.INCIDENTS, Topics.ALERTS, Topics.ACTIONS, Topics.JOB_FAILURES),
          new Flush());
      while (running) {
        try {
          // an empty poll proves nothing (it is empty during an outage too): only records, a
          // commit or a lag check that reached the broker end a retry
          if (poll() || (assigned && state == State.STARTING)) {
            if (state == State.RETRYING) {
              LOG.info("alerts consumer: consuming again");
            }
            state(State.CONSUMING, null);
            failures = 0;
          }
        } catch (WakeupException e) {
          break;
        } catch (RuntimeException e) {
          // a broker away longer than a timeout, a full disk under the notifier, a bug: count it,
          // keep what was not made durable uncommitted, wait, and go on
          metrics.error("consumer");
          failures++;
          if (state != State.RETRYING) {
            LOG.error("alerts consumer: {}; retrying", e.toString());
          }
          state(State.RETRYING, e.getClass().getSimpleName() + ": " + e.getMessage());
          pause(Math.min(5_000L, 100L << Math.min(6, failures)));
        }
      }
    } catch (WakeupException e) {
      // closing
    } finally {
      flush(); // only what was handled and saved: never a record it did not handle
      consumer.close(org.apache.kafka.clients.consumer.CloseOptions.timeout(Duration.ofSeconds(5)));
      deadLetters.close(Duration.ofSeconds(5));
      state(State.STOPPED, null);
    }
  }

  /**
   * One poll: hands each record on, then has the caller make them durable before committing their
   * offsets. A record that fails is read again (the consumer is sought back to it). True when the
   * broker was heard from (records, a commit, a lag check).
   */
  private boolean poll() {
    ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(200));
    if (!consumer.assignment().isEmpty()) {
      assigned = true;
    }
    Map<TopicPartition, Long> next = new HashMap<>();
    for (TopicPartition tp : records.partitions()) {
      next.put(tp, records.records(tp).get(0).offset());
    }
    try {
      for (ConsumerRecord<byte[], byte[]> r : records) {
        handle(r);
        TopicPartition tp = new TopicPartition(r.topic(), r.partition());
        next.put(tp, r.offset() + 1);
        pending.put(tp, new OffsetAndMetadata(r.offset() + 1));
        uncommitted++;
      }
    } catch (RuntimeException e) {
      next.forEach(consumer::seek); // read the unhandled ones again
      throw e;
    }
    boolean heard = !records.isEmpty();
    if (!pending.isEmpty()) {
      flushOrThrow(); // fails while the disk is full: polling goes on, commits wait for it
      heard = true;
    }
    long now = System.nanoTime(); // an interval: the monotonic clock, not the (injected) date
    if (now - lagCheckedAt >= 5_000_000_000L && assigned) {
      lagCheckedAt = now;
      reportLag();
      heard = true;
    }
    return heard;
  }

  /** Makes the handled records durable (the notifier's outbox), then commits their offsets. */
  private void flushOrThrow() {
    afterBatch.run();
    consumer.commitSync(pending, Duration.ofSeconds(5));
    pending.clear();
    uncommitted = 0;
  }

  private void flush() {
    if (pending.isEmpty()) {
      return;
    }
    try {
      flushOrThrow();
    } catch (RuntimeException e) {
      metrics.error("consumer");
      LOG.warn(
          "alerts consumer: {} handled records not committed ({}); they are read again",
          uncommitted,
          e.toString());
      pending.clear(); // never commit them later, out of order with a seek
      uncommitted = 0;
    }
  }

  /** Before partitions move to another consumer, commit what was handled and saved. */
  private final class Flush implements ConsumerRebalanceListener {
    @Override
    public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
      flush();
    }

    @Override
    public void onPartitionsAssigned(Collection<TopicPartition> partitions) {}
  }

  private void pause(long ms) {
    try {
      Thread.sleep(ms); // the back-off between retries of a failed poll, not a wait for a state
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      running = false;
    }
  }

  /** Records behind the end of each topic (the last stable offset, as read_committed sees it). */
  private void reportLag() {
    var assignment = consumer.assignment();
    // a short timeout: the loop stays responsive during a broker outage (a failure is retried)
    Map<TopicPartition, Long> ends = consumer.endOffsets(assignment, Duration.ofSeconds(2));
    Map<String, Long> byTopic = new HashMap<>();
    for (var tp : assignment) {
      long behind = Math.max(0, ends.getOrDefault(tp, 0L) - consumer.position(tp));
      byTopic.merge(tp.topic(), behind, Long::sum);
    }
    byTopic.forEach(metrics::consumerLag);
  }

  void handle(ConsumerRecord<byte[], byte[]> r) {
    metrics.consumed(r.topic());
    try {
      if (Topics.INCIDENTS.equals(r.topic())) {
        onIncident.accept(WireJson.readIncident(r.value()));
      } else if (Topics.ACTIONS.equals(r.topic())) {
        onAction.accept(WireJson.read(r.value(), Action.class));
      } else if (Topics.JOB_FAILURES.equals(r.topic())) {
        onJobFailure.accept(WireJson.read(r.value(), JobFailure.class));
      } else {
        onAlert.accept(WireJson.readAlert(r.value()));
      }
    } catch (WireFormatException e) {
      deadLetter(r, e.getMessage());
    } catch (RuntimeException e) {
      // handlers are in memory: one that throws on a record would throw on it again, forever
      LOG.error("handling {}/{}@{} failed", r.topic(), r.partition(), r.offset(), e);
      deadLetter(r, "alerts service failed to handle it: " + e);
    }
  }

  private void deadLetter(ConsumerRecord<byte[], byte[]> r, String reason) {
    DeadLetter d =
        DeadLetter.of(
            "alerts",
            r.topic() + "/" + r.partition() + "@" + r.offset(),
            reason,
            r.value(),
            clock.instant());
    deadLetters.send(new ProducerRecord<>(Topics.DEAD_LETTER, null, WireJson.toBytes(d)));
    metrics.deadLetter("alerts", r.topic());
    LOG.warn("dead letter from {}/{}@{}: {}", r.topic(), r.partition(), r.offset(), reason);
  }

  @Override
  public void close() {
    running = false;
    consumer.wakeup();
  }
}
