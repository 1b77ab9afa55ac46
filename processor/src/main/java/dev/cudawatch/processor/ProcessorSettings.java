package dev.cudawatch.processor;

import dev.cudawatch.common.Topics;
import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.common.config.Validated;
import dev.cudawatch.processor.health.HealthSettings;
import java.util.List;

/**
 * The processor's configuration (YAML plus {@code CUDAWATCH_} environment overrides).
 *
 * @param kafka where the topics live
 * @param groupId consumer group of the job's Kafka source
 * @param parallelism operator parallelism
 * @param checkpointIntervalMs how often state and Kafka transactions commit; bounds alert latency
 * @param transactionalIdPrefix unique per job: two jobs with one prefix fence each other
 * @param transactionTimeoutMs must stay under the broker's transaction.max.timeout.ms
 * @param flushAfterMs a stream quiet this long emits its open incidents
 * @param stateTtlHours per-stream state unused this long is dropped
 * @param catalogs extra signature catalogs (YAML paths), read at submission
 * @param rules extra detection rule files (YAML paths), read at submission
 * @param maxOutOfOrderSeconds how late an incident may arrive and still count in rule windows
 * @param xidWindowSeconds how close in time a kernel Xid and an application incident on the same
 *     GPU must be to be joined
 * @param inputs the topics the job reads and each one's record format (default: {@code
 *     cudawatch.logs} in the agent's format)
 * @param health slow ranks, job slowdowns, the GPU health ledger and its hand-off
 * @param maxClockSkewSeconds how far past its ingest time (the Kafka record's timestamp, never
 *     later than the job's clock) a record's event time may be; later times are clamped to it and
 *     counted, so one node's clock cannot move event time for the others (at most 600: the sinks
 *     write event times as Kafka timestamps, which brokers refuse an hour ahead)
 */
public record ProcessorSettings(
    KafkaSettings kafka,
    String groupId,
    Integer parallelism,
    Long checkpointIntervalMs,
    String transactionalIdPrefix,
    Long transactionTimeoutMs,
    Long flushAfterMs,
    Long stateTtlHours,
    List<String> catalogs,
    List<String> rules,
    Long maxOutOfOrderSeconds,
    Long xidWindowSeconds,
    List<InputSettings> inputs,
    HealthSettings health,
    Long maxClockSkewSeconds)
    implements Validated {

  public ProcessorSettings {
    kafka = kafka == null ? KafkaSettings.defaults() : kafka;
    inputs =
        inputs == null || inputs.isEmpty()
            ? List.of(new InputSettings(Topics.LOGS, null, null))
            : List.copyOf(inputs);
    groupId = groupId == null ? "cudawatch-processor" : groupId;
    parallelism = parallelism == null ? 2 : parallelism;
    checkpointIntervalMs = checkpointIntervalMs == null ? 1000L : checkpointIntervalMs;
    transactionalIdPrefix =
        transactionalIdPrefix == null ? "cudawatch-processor" : transactionalIdPrefix;
    transactionTimeoutMs = transactionTimeoutMs == null ? 600_000L : transactionTimeoutMs;
    flushAfterMs = flushAfterMs == null ? 1000L : flushAfterMs;
    stateTtlHours = stateTtlHours == null ? 24L : stateTtlHours;
    catalogs = catalogs == null ? List.of() : List.copyOf(catalogs);
    rules = rules == null ? List.of() : List.copyOf(rules);
    maxOutOfOrderSeconds = maxOutOfOrderSeconds == null ? 5L : maxOutOfOrderSeconds;
    xidWindowSeconds = xidWindowSeconds == null ? 30L : xidWindowSeconds;
    health = health == null ? HealthSettings.defaults() : health;
    maxClockSkewSeconds = maxClockSkewSeconds == null ? 10L : maxClockSkewSeconds;
  }

  /** Settings with the default clock skew. */
  public ProcessorSettings(
      KafkaSettings kafka,
      String groupId,
      Integer parallelism,
      Long checkpointIntervalMs,
      String transactionalIdPrefix,
      Long transactionTimeoutMs,
      Long flushAfterMs,
      Long stateTtlHours,
      List<String> catalogs,
      List<String> rules,
      Long maxOutOfOrderSeconds,
      Long xidWindowSeconds,
      List<InputSettings> inputs,
      HealthSettings health) {
    this(
        kafka,
        groupId,
        parallelism,
        checkpointIntervalMs,
        transactionalIdPrefix,
        transactionTimeoutMs,
        flushAfterMs,
        stateTtlHours,
        catalogs,
        rules,
        maxOutOfOrderSeconds,
        xidWindowSeconds,
        inputs,
        health,
        null);
  }

  /** Settings with the default health settings. */
  public ProcessorSettings(
      KafkaSettings kafka,
      String groupId,
      Integer parallelism,
      Long checkpointIntervalMs,
      String transactionalIdPrefix,
      Long transactionTimeoutMs,
      Long flushAfterMs,
      Long stateTtlHours,
      List<String> catalogs,
      List<String> rules,
      Long maxOutOfOrderSeconds,
      Long xidWindowSeconds,
      List<InputSettings> inputs) {
    this(
        kafka,
        groupId,
        parallelism,
        checkpointIntervalMs,
        transactionalIdPrefix,
        transactionTimeoutMs,
        flushAfterMs,
        stateTtlHours,
        catalogs,
        rules,
        maxOutOfOrderSeconds,
        xidWindowSeconds,
        inputs,
        null);
  }

  /** The same settings with other health settings. */
  public ProcessorSettings withHealth(HealthSettings h) {
    return new ProcessorSettings(
        kafka,
        groupId,
        parallelism,
        checkpointIntervalMs,
        transactionalIdPrefix,
        transactionTimeoutMs,
        flushAfterMs,
        stateTtlHours,
        catalogs,
        rules,
        maxOutOfOrderSeconds,
        xidWindowSeconds,
        inputs,
        h,
        maxClockSkewSeconds);
  }

  public static ProcessorSettings defaults() {
    return new ProcessorSettings(
        null, null, null, null, null, null, null, null, null, null, null, null, null, null, null);
  }

  /** Settings that read the agent's topic only. */
  public ProcessorSettings(
      KafkaSettings kafka,
      String groupId,
      Integer parallelism,
      Long checkpointIntervalMs,
      String transactionalIdPrefix,
      Long transactionTimeoutMs,
      Long flushAfterMs,
      Long stateTtlHours,
      List<String> catalogs,
      List<String> rules,
      Long maxOutOfOrderSeconds,
      Long xidWindowSeconds) {
    this(
        kafka,
        groupId,
        parallelism,
        checkpointIntervalMs,
        transactionalIdPrefix,
        transactionTimeoutMs,
        flushAfterMs,
        stateTtlHours,
        catalogs,
        rules,
        maxOutOfOrderSeconds,
        xidWindowSeconds,
        null);
  }

  /** The same settings reading {@code in} instead of the configured inputs. */
  public ProcessorSettings withInputs(List<InputSettings> in) {
    return new ProcessorSettings(
        kafka,
        groupId,
        parallelism,
        checkpointIntervalMs,
        transactionalIdPrefix,
        transactionTimeoutMs,
        flushAfterMs,
        stateTtlHours,
        catalogs,
        rules,
        maxOutOfOrderSeconds,
        xidWindowSeconds,
        in,
        health,
        maxClockSkewSeconds);
  }

  public ProcessorSettings withKafka(KafkaSettings k) {
    return new ProcessorSettings(
        k,
        groupId,
        parallelism,
        checkpointIntervalMs,
        transactionalIdPrefix,
        transactionTimeoutMs,
        flushAfterMs,
        stateTtlHours,
        catalogs,
        rules,
        maxOutOfOrderSeconds,
        xidWindowSeconds,
        inputs,
        health,
        maxClockSkewSeconds);
  }

  /** The same settings with another bound on clock skew. */
  public ProcessorSettings withMaxClockSkewSeconds(long seconds) {
    return new ProcessorSettings(
        kafka,
        groupId,
        parallelism,
        checkpointIntervalMs,
        transactionalIdPrefix,
        transactionTimeoutMs,
        flushAfterMs,
        stateTtlHours,
        catalogs,
        rules,
        maxOutOfOrderSeconds,
        xidWindowSeconds,
        inputs,
        health,
        seconds);
  }

  @Override
  public void validate(String path) {
    kafka.validate(path + "kafka.");
    health.validate(path + "health.");
    for (int i = 0; i < inputs.size(); i++) {
      inputs.get(i).validate(path + "inputs[" + i + "].");
    }
    Validated.require(
        inputs.stream().map(InputSettings::topic).distinct().count() == inputs.size(),
        path + "inputs",
        "names a topic twice");
    Validated.require(
        parallelism >= 1 && parallelism <= 1024, path + "parallelism", "must be 1..1024");
    Validated.require(
        checkpointIntervalMs >= 100, path + "checkpoint_interval_ms", "must be at least 100");
    Validated.require(
        transactionTimeoutMs > checkpointIntervalMs && transactionTimeoutMs <= 900_000,
        path + "transaction_timeout_ms",
        "must exceed the checkpoint interval and stay within the broker's transaction.max.timeout.ms (default 900000)");
    Validated.require(flushAfterMs >= 10, path + "flush_after_ms", "must be at least 10");
    Validated.require(
        maxClockSkewSeconds >= 1 && maxClockSkewSeconds <= 600,
        path + "max_clock_skew_seconds",
        "must be 1..600 (the job writes event times as Kafka timestamps, and brokers refuse"
            + " timestamps an hour ahead)");
    Validated.require(stateTtlHours >= 1, path + "state_ttl_hours", "must be at least 1");
    Validated.require(
        !transactionalIdPrefix.isBlank(), path + "transactional_id_prefix", "must not be empty");
  }
}
