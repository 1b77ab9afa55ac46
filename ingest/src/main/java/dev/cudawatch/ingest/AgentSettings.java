package dev.cudawatch.ingest;

import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.common.config.Validated;
import java.util.List;

/**
 * The agent's configuration (YAML plus {@code CUDAWATCH_AGENT_} environment overrides).
 *
 * @param kafka where to ship
 * @param host this node's name (default: the hostname)
 * @param job job id for every record (default: from SLURM_JOB_ID, TORCHELASTIC_RUN_ID, ...)
 * @param files globs of training logs to follow
 * @param stateDir where file positions are checkpointed
 * @param pollIntervalMs how often files are checked for new lines
 * @param checkpointIntervalMs how often positions are written
 * @param maxLineBytes longer lines are cut with a marker and counted
 * @param readBudgetBytes bytes read per file per poll
 */
public record AgentSettings(
    KafkaSettings kafka,
    String host,
    String job,
    List<String> files,
    String stateDir,
    Long pollIntervalMs,
    Long checkpointIntervalMs,
    Integer maxLineBytes,
    Long readBudgetBytes)
    implements Validated {

  public AgentSettings {
    kafka = kafka == null ? KafkaSettings.defaults() : kafka;
    host = host == null ? NodeEnvironment.hostname() : host;
    job = job == null ? NodeEnvironment.jobId(System.getenv()) : job;
    files = files == null ? List.of() : List.copyOf(files);
    stateDir = stateDir == null ? System.getProperty("user.home") + "/.cudawatch/agent" : stateDir;
    pollIntervalMs = pollIntervalMs == null ? 250L : pollIntervalMs;
    checkpointIntervalMs = checkpointIntervalMs == null ? 1000L : checkpointIntervalMs;
    maxLineBytes = maxLineBytes == null ? 64 * 1024 : maxLineBytes;
    readBudgetBytes = readBudgetBytes == null ? 4L << 20 : readBudgetBytes;
  }

  public static AgentSettings defaults() {
    return new AgentSettings(null, null, null, null, null, null, null, null, null);
  }

  public AgentSettings with(KafkaSettings k, List<String> globs, String state) {
    return new AgentSettings(
        k,
        host,
        job,
        globs,
        state,
        pollIntervalMs,
        checkpointIntervalMs,
        maxLineBytes,
        readBudgetBytes);
  }

  @Override
  public void validate(String path) {
    kafka.validate(path + "kafka.");
    Validated.require(!host.isBlank(), path + "host", "must not be empty");
    Validated.require(pollIntervalMs >= 10, path + "poll_interval_ms", "must be at least 10");
    Validated.require(
        checkpointIntervalMs >= 100, path + "checkpoint_interval_ms", "must be at least 100");
    Validated.require(
        maxLineBytes >= 1024 && maxLineBytes <= 16 << 20,
        path + "max_line_bytes",
        "must be 1 KiB..16 MiB");
    Validated.require(readBudgetBytes >= 4096, path + "read_budget_bytes", "must be at least 4096");
  }
}
