package dev.cudawatch.processor.config;

import dev.cudawatch.common.Topics;
import dev.cudawatch.common.config.ConfigLoader;
import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.common.config.Validated;
import dev.cudawatch.processor.formats.InputSettings;
import dev.cudawatch.processor.health.HealthSettings;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The processor's configuration (YAML plus {@code CUDAWATCH_PROCESSOR_} environment overrides):
 * {@link #load} reads it, {@link #builder()} makes it in code. The canonical constructor is what
 * the YAML binding calls (a record's must be public): it fills in the defaults, in this one place,
 * for every key left out, so code builds settings with the builder and never restates them.
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
 * @param jobFailureGapMinutes how long a job's incidents may pause and still be one job failure
 *     (NCCL's default timeout, 10 minutes, and a margin)
 * @param memoryTrendRepeatMinutes a GPU's memory-leak warning is sent again at most this often
 * @param signalThrottleMs each job's activity signal (for silence rules) and each GPU's holder (for
 *     kernel incidents) crosses the shuffle at most once per this long from one subtask
 * @param watermarkIdleSeconds a job subtask without incidents this long stops holding back event
 *     time (its watermark idles), so rule windows and the Xid join still close
 * @param warmupLines lines of healthy output classified once per JVM at start, then a few failing
 *     ones, so the first real lines do not meet the classifier cold (0: no warm-up)
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
    Long maxClockSkewSeconds,
    Long jobFailureGapMinutes,
    Long memoryTrendRepeatMinutes,
    Long signalThrottleMs,
    Long watermarkIdleSeconds,
    Integer warmupLines)
    implements Validated {

  /** The environment prefix of the processor's overrides. */
  public static final String ENV_PREFIX = "CUDAWATCH_PROCESSOR";

  /** For the YAML binding and {@link Builder#build()}: a null is a key left out. */
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
    jobFailureGapMinutes = jobFailureGapMinutes == null ? 15L : jobFailureGapMinutes;
    memoryTrendRepeatMinutes = memoryTrendRepeatMinutes == null ? 10L : memoryTrendRepeatMinutes;
    signalThrottleMs = signalThrottleMs == null ? 1000L : signalThrottleMs;
    watermarkIdleSeconds = watermarkIdleSeconds == null ? 30L : watermarkIdleSeconds;
    warmupLines = warmupLines == null ? 20_000 : warmupLines;
  }

  public static ProcessorSettings defaults() {
    return builder().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  /** A builder holding these settings, to derive other settings from them. */
  public Builder toBuilder() {
    return new Builder()
        .kafka(kafka)
        .groupId(groupId)
        .parallelism(parallelism)
        .checkpointIntervalMs(checkpointIntervalMs)
        .transactionalIdPrefix(transactionalIdPrefix)
        .transactionTimeoutMs(transactionTimeoutMs)
        .flushAfterMs(flushAfterMs)
        .stateTtlHours(stateTtlHours)
        .catalogs(catalogs)
        .rules(rules)
        .maxOutOfOrderSeconds(maxOutOfOrderSeconds)
        .xidWindowSeconds(xidWindowSeconds)
        .inputs(inputs)
        .health(health)
        .maxClockSkewSeconds(maxClockSkewSeconds)
        .jobFailureGapMinutes(jobFailureGapMinutes)
        .memoryTrendRepeatMinutes(memoryTrendRepeatMinutes)
        .signalThrottleMs(signalThrottleMs)
        .watermarkIdleSeconds(watermarkIdleSeconds)
        .warmupLines(warmupLines);
  }

  /**
   * The settings of {@code file} (null: defaults only) with the {@code CUDAWATCH_PROCESSOR_}
   * variables of {@code env} over them, checked; errors name the file, line and key.
   */
  public static ProcessorSettings load(Path file, Map<String, String> env) {
    return new ConfigLoader(ENV_PREFIX, env).load(file, ProcessorSettings.class);
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
    Validated.require(
        jobFailureGapMinutes >= 1, path + "job_failure_gap_minutes", "must be at least 1");
    Validated.require(
        memoryTrendRepeatMinutes >= 1, path + "memory_trend_repeat_minutes", "must be at least 1");
    Validated.require(
        signalThrottleMs >= 10 && signalThrottleMs <= 60_000,
        path + "signal_throttle_ms",
        "must be 10..60000");
    Validated.require(
        watermarkIdleSeconds >= 1, path + "watermark_idle_seconds", "must be at least 1");
    Validated.require(
        warmupLines >= 0 && warmupLines <= 1_000_000, path + "warmup_lines", "must be 0..1000000");
  }

  /**
   * Builds settings in code; a value left unset takes its default (the canonical constructor's).
   * {@link #build()} does not validate, as the YAML binding does not: {@link #load} and {@link
   * ConfigLoader#validate} check, with the file's line numbers (tests build short intervals on
   * purpose).
   */
  public static final class Builder {
    private KafkaSettings kafka;
    private String groupId;
    private Integer parallelism;
    private Long checkpointIntervalMs;
    private String transactionalIdPrefix;
    private Long transactionTimeoutMs;
    private Long flushAfterMs;
    private Long stateTtlHours;
    private List<String> catalogs;
    private List<String> rules;
    private Long maxOutOfOrderSeconds;
    private Long xidWindowSeconds;
    private List<InputSettings> inputs;
    private HealthSettings health;
    private Long maxClockSkewSeconds;
    private Long jobFailureGapMinutes;
    private Long memoryTrendRepeatMinutes;
    private Long signalThrottleMs;
    private Long watermarkIdleSeconds;
    private Integer warmupLines;

    private Builder() {}

    public Builder kafka(KafkaSettings kafka) {
      this.kafka = kafka;
      return this;
    }

    /** Kafka at {@code bootstrapServers}, with no extra client properties. */
    public Builder bootstrapServers(String bootstrapServers) {
      this.kafka = new KafkaSettings(bootstrapServers, null);
      return this;
    }

    public Builder groupId(String groupId) {
      this.groupId = groupId;
      return this;
    }

    public Builder parallelism(Integer parallelism) {
      this.parallelism = parallelism;
      return this;
    }

    public Builder checkpointIntervalMs(Long checkpointIntervalMs) {
      this.checkpointIntervalMs = checkpointIntervalMs;
      return this;
    }

    public Builder transactionalIdPrefix(String transactionalIdPrefix) {
      this.transactionalIdPrefix = transactionalIdPrefix;
      return this;
    }

    public Builder transactionTimeoutMs(Long transactionTimeoutMs) {
      this.transactionTimeoutMs = transactionTimeoutMs;
      return this;
    }

    public Builder flushAfterMs(Long flushAfterMs) {
      this.flushAfterMs = flushAfterMs;
      return this;
    }

    public Builder stateTtlHours(Long stateTtlHours) {
      this.stateTtlHours = stateTtlHours;
      return this;
    }

    public Builder catalogs(List<String> catalogs) {
      this.catalogs = catalogs;
      return this;
    }

    public Builder rules(List<String> rules) {
      this.rules = rules;
      return this;
    }

    public Builder maxOutOfOrderSeconds(Long maxOutOfOrderSeconds) {
      this.maxOutOfOrderSeconds = maxOutOfOrderSeconds;
      return this;
    }

    public Builder xidWindowSeconds(Long xidWindowSeconds) {
      this.xidWindowSeconds = xidWindowSeconds;
      return this;
    }

    public Builder inputs(List<InputSettings> inputs) {
      this.inputs = inputs;
      return this;
    }

    public Builder health(HealthSettings health) {
      this.health = health;
      return this;
    }

    public Builder maxClockSkewSeconds(Long maxClockSkewSeconds) {
      this.maxClockSkewSeconds = maxClockSkewSeconds;
      return this;
    }

    public Builder jobFailureGapMinutes(Long jobFailureGapMinutes) {
      this.jobFailureGapMinutes = jobFailureGapMinutes;
      return this;
    }

    public Builder memoryTrendRepeatMinutes(Long memoryTrendRepeatMinutes) {
      this.memoryTrendRepeatMinutes = memoryTrendRepeatMinutes;
      return this;
    }

    public Builder signalThrottleMs(Long signalThrottleMs) {
      this.signalThrottleMs = signalThrottleMs;
      return this;
    }

    public Builder watermarkIdleSeconds(Long watermarkIdleSeconds) {
      this.watermarkIdleSeconds = watermarkIdleSeconds;
      return this;
    }

    public Builder warmupLines(Integer warmupLines) {
      this.warmupLines = warmupLines;
      return this;
    }

    public ProcessorSettings build() {
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
          maxClockSkewSeconds,
          jobFailureGapMinutes,
          memoryTrendRepeatMinutes,
          signalThrottleMs,
          watermarkIdleSeconds,
          warmupLines);
    }
  }
}
