package dev.cudawatch.ingest;

import dev.cudawatch.common.config.ConfigException;
import dev.cudawatch.common.config.ConfigLoader;
import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.common.config.Validated;
import dev.cudawatch.common.http.DefaultPorts;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The agent's configuration (YAML plus {@code CUDAWATCH_AGENT_} environment overrides).
 *
 * @param kafka where to ship
 * @param host this node's name (default: the hostname)
 * @param job job id for every record (default: from SLURM_JOB_ID, TORCHELASTIC_RUN_ID, ...)
 * @param files globs of training logs to follow: strings, or {@code {path: GLOB, format: cri}} for
 *     container logs in the CRI format (see {@link FileGlob})
 * @param stateDir where file positions are checkpointed
 * @param pollIntervalMs how often files are checked for new lines
 * @param checkpointIntervalMs how often positions are written
 * @param maxLineBytes longer lines are cut with a marker and counted
 * @param readBudgetBytes bytes read per file per poll (16 KiB): a round visits every file, so a
 *     small share keeps rounds short when the agent is behind, and a new file's lines and a quiet
 *     file's marker do not wait behind a chatty neighbour's backlog (Vector's max_read_bytes)
 * @param kernelLog {@code /dev/kmsg}, a kernel log file (dmesg or journal export) to follow, or
 *     null for none
 * @param nvidiaSmi the nvidia-smi binary for GPU memory samples and PCI-to-index mapping
 * @param gpuSampleIntervalMs milliseconds between GPU memory samples; 0 turns sampling off
 * @param spoolMaxBytes disk spool limit for sources that cannot be re-read; the oldest records
 *     beyond it are dropped and counted
 * @param spoolSegmentBytes size of one spool segment file
 * @param httpHost address of the agent's /metrics and /healthz
 * @param httpPort port of /metrics and /healthz; -1 turns them off
 * @param keepRaw ship the text of lines as written, beside the text without terminal escapes
 * @param closeInactiveMs a followed file that has not grown for this long is closed (its position
 *     kept) and opened again when it grows, so finished job logs hold no descriptor or buffer
 * @param procDir where the node's proc file system is mounted: the boot id and boot time of kernel
 *     records come from it, and the environment of a process a kernel line names ({@code /proc};
 *     {@code /host/proc} in a container)
 * @param scanIntervalMs how often the globs are scanned for new, renamed and changed files; open
 *     files are read every {@code poll_interval_ms}. Scanning thousands of paths is the costly part
 *     of a round, so it runs less often; 0 scans every round
 * @param deadLetterMaxBytes bytes kept under {@code state_dir/dead-letters/} of records the broker
 *     rejected for good (too large, not authorized); beyond it they are only counted
 * @param runSpoolRoot where {@code cudawatch run} spools what it could not ship ({@code
 *     ROOT/cudawatch-run-USER/RUN-ID/}) and where the agent ships it from; {@code /var/tmp}
 * @param slurm the Slurm attribution source (prolog sidecars, path patterns, scontrol)
 * @param kubernetes the Kubernetes attribution source (the kubelet's PodResources API)
 * @param quietMarkerMs once a followed file has written nothing for this long after its last line,
 *     the agent ships a {@code QUIET} marker behind that line, so the processor closes the stream's
 *     incidents at once instead of after its own {@code flush_after_ms}; 0 sends none. One small
 *     record per burst of lines per file
 * @param webConfigFile TLS and basic auth of /metrics and /healthz: a web-config file in the format
 *     of Prometheus exporters ({@code tls_server_config}, {@code basic_auth_users} with bcrypt
 *     hashes); both paths need the credentials. Unset: plain HTTP without auth
 */
public record AgentSettings(
    KafkaSettings kafka,
    String host,
    String job,
    List<FileGlob> files,
    String stateDir,
    Long pollIntervalMs,
    Long checkpointIntervalMs,
    Integer maxLineBytes,
    Long readBudgetBytes,
    String kernelLog,
    String nvidiaSmi,
    Long gpuSampleIntervalMs,
    Long spoolMaxBytes,
    Long spoolSegmentBytes,
    String httpHost,
    Integer httpPort,
    Boolean keepRaw,
    Long closeInactiveMs,
    String procDir,
    Long deadLetterMaxBytes,
    Long scanIntervalMs,
    String runSpoolRoot,
    SlurmSourceSettings slurm,
    KubernetesSourceSettings kubernetes,
    Long quietMarkerMs,
    String webConfigFile)
    implements Validated {
  /** Environment variables {@code CUDAWATCH_AGENT_...} override keys of the file. */
  public static final String ENV_PREFIX = "CUDAWATCH_AGENT";

  public AgentSettings {
    kafka = kafka == null ? KafkaSettings.defaults() : kafka;
    host = host == null ? NodeEnvironment.hostname() : host;
    job = job == null ? NodeEnvironment.jobId(System.getenv()) : job;
    files = files == null ? List.of() : List.copyOf(files);
    stateDir = stateDir == null ? System.getProperty("user.home") + "/.cudawatch/agent" : stateDir;
    pollIntervalMs = pollIntervalMs == null ? 250L : pollIntervalMs;
    checkpointIntervalMs = checkpointIntervalMs == null ? 1000L : checkpointIntervalMs;
    maxLineBytes = maxLineBytes == null ? 64 * 1024 : maxLineBytes;
    readBudgetBytes = readBudgetBytes == null ? 16L << 10 : readBudgetBytes;
    nvidiaSmi = nvidiaSmi == null ? "nvidia-smi" : nvidiaSmi;
    gpuSampleIntervalMs = gpuSampleIntervalMs == null ? 1000L : gpuSampleIntervalMs;
    spoolMaxBytes = spoolMaxBytes == null ? 1L << 30 : spoolMaxBytes;
    spoolSegmentBytes = spoolSegmentBytes == null ? 64L << 20 : spoolSegmentBytes;
    httpHost = httpHost == null ? "127.0.0.1" : httpHost;
    httpPort = httpPort == null ? DefaultPorts.AGENT_HTTP : httpPort;
    keepRaw = keepRaw == null ? Boolean.FALSE : keepRaw;
    closeInactiveMs = closeInactiveMs == null ? 300_000L : closeInactiveMs;
    procDir = procDir == null ? "/proc" : procDir;
    deadLetterMaxBytes = deadLetterMaxBytes == null ? 64L << 20 : deadLetterMaxBytes;
    scanIntervalMs = scanIntervalMs == null ? 1000L : scanIntervalMs;
    runSpoolRoot =
        runSpoolRoot == null ? dev.cudawatch.ingest.run.RunSpools.DEFAULT_ROOT : runSpoolRoot;
    slurm = slurm == null ? SlurmSourceSettings.defaults() : slurm;
    kubernetes = kubernetes == null ? KubernetesSourceSettings.defaults() : kubernetes;
    quietMarkerMs = quietMarkerMs == null ? 100L : quietMarkerMs;
  }

  /** The settings with every key at its default. */
  public static AgentSettings defaults() {
    return builder().build();
  }

  /**
   * Loads the agent's YAML {@code file} (null: defaults only) with {@code CUDAWATCH_AGENT_}
   * overrides from {@code env}; every error is one {@code file:line: key: reason} line.
   */
  public static AgentSettings load(Path file, Map<String, String> env) {
    return new ConfigLoader(ENV_PREFIX, env).load(file, AgentSettings.class);
  }

  /** A builder with every key unset: {@link #build()} fills in the defaults. */
  public static Builder builder() {
    return new Builder();
  }

  /** A builder holding these settings, to change a few of them. */
  public Builder toBuilder() {
    Builder b = new Builder();
    b.kafka = kafka;
    b.host = host;
    b.job = job;
    b.files = files;
    b.stateDir = stateDir;
    b.pollIntervalMs = pollIntervalMs;
    b.checkpointIntervalMs = checkpointIntervalMs;
    b.maxLineBytes = maxLineBytes;
    b.readBudgetBytes = readBudgetBytes;
    b.kernelLog = kernelLog;
    b.nvidiaSmi = nvidiaSmi;
    b.gpuSampleIntervalMs = gpuSampleIntervalMs;
    b.spoolMaxBytes = spoolMaxBytes;
    b.spoolSegmentBytes = spoolSegmentBytes;
    b.httpHost = httpHost;
    b.httpPort = httpPort;
    b.keepRaw = keepRaw;
    b.closeInactiveMs = closeInactiveMs;
    b.procDir = procDir;
    b.deadLetterMaxBytes = deadLetterMaxBytes;
    b.scanIntervalMs = scanIntervalMs;
    b.runSpoolRoot = runSpoolRoot;
    b.slurm = slurm;
    b.kubernetes = kubernetes;
    b.quietMarkerMs = quietMarkerMs;
    b.webConfigFile = webConfigFile;
    return b;
  }

  /**
   * Settings named one by one; what is left unset takes its default from the record's constructor
   * (the one place defaults live, as the YAML loader fills missing keys with null).
   */
  public static final class Builder {
    private KafkaSettings kafka;
    private String host;
    private String job;
    private List<FileGlob> files;
    private String stateDir;
    private Long pollIntervalMs;
    private Long checkpointIntervalMs;
    private Integer maxLineBytes;
    private Long readBudgetBytes;
    private String kernelLog;
    private String nvidiaSmi;
    private Long gpuSampleIntervalMs;
    private Long spoolMaxBytes;
    private Long spoolSegmentBytes;
    private String httpHost;
    private Integer httpPort;
    private Boolean keepRaw;
    private Long closeInactiveMs;
    private String procDir;
    private Long deadLetterMaxBytes;
    private Long scanIntervalMs;
    private String runSpoolRoot;
    private SlurmSourceSettings slurm;
    private KubernetesSourceSettings kubernetes;
    private Long quietMarkerMs;
    private String webConfigFile;

    private Builder() {}

    public Builder kafka(KafkaSettings kafka) {
      this.kafka = kafka;
      return this;
    }

    public Builder host(String host) {
      this.host = host;
      return this;
    }

    public Builder job(String job) {
      this.job = job;
      return this;
    }

    public Builder files(List<FileGlob> files) {
      this.files = files;
      return this;
    }

    /** Plain globs of training logs to follow. */
    public Builder globs(List<String> globs) {
      return files(FileGlob.plain(globs));
    }

    public Builder stateDir(String stateDir) {
      this.stateDir = stateDir;
      return this;
    }

    public Builder pollIntervalMs(long pollIntervalMs) {
      this.pollIntervalMs = pollIntervalMs;
      return this;
    }

    public Builder checkpointIntervalMs(long checkpointIntervalMs) {
      this.checkpointIntervalMs = checkpointIntervalMs;
      return this;
    }

    public Builder maxLineBytes(int maxLineBytes) {
      this.maxLineBytes = maxLineBytes;
      return this;
    }

    public Builder readBudgetBytes(long readBudgetBytes) {
      this.readBudgetBytes = readBudgetBytes;
      return this;
    }

    public Builder kernelLog(String kernelLog) {
      this.kernelLog = kernelLog;
      return this;
    }

    public Builder nvidiaSmi(String nvidiaSmi) {
      this.nvidiaSmi = nvidiaSmi;
      return this;
    }

    public Builder gpuSampleIntervalMs(long gpuSampleIntervalMs) {
      this.gpuSampleIntervalMs = gpuSampleIntervalMs;
      return this;
    }

    public Builder spoolMaxBytes(long spoolMaxBytes) {
      this.spoolMaxBytes = spoolMaxBytes;
      return this;
    }

    public Builder spoolSegmentBytes(long spoolSegmentBytes) {
      this.spoolSegmentBytes = spoolSegmentBytes;
      return this;
    }

    public Builder httpHost(String httpHost) {
      this.httpHost = httpHost;
      return this;
    }

    public Builder httpPort(int httpPort) {
      this.httpPort = httpPort;
      return this;
    }

    public Builder keepRaw(boolean keepRaw) {
      this.keepRaw = keepRaw;
      return this;
    }

    public Builder closeInactiveMs(long closeInactiveMs) {
      this.closeInactiveMs = closeInactiveMs;
      return this;
    }

    public Builder procDir(String procDir) {
      this.procDir = procDir;
      return this;
    }

    public Builder deadLetterMaxBytes(long deadLetterMaxBytes) {
      this.deadLetterMaxBytes = deadLetterMaxBytes;
      return this;
    }

    public Builder scanIntervalMs(long scanIntervalMs) {
      this.scanIntervalMs = scanIntervalMs;
      return this;
    }

    public Builder runSpoolRoot(String runSpoolRoot) {
      this.runSpoolRoot = runSpoolRoot;
      return this;
    }

    public Builder slurm(SlurmSourceSettings slurm) {
      this.slurm = slurm;
      return this;
    }

    public Builder kubernetes(KubernetesSourceSettings kubernetes) {
      this.kubernetes = kubernetes;
      return this;
    }

    public Builder quietMarkerMs(long quietMarkerMs) {
      this.quietMarkerMs = quietMarkerMs;
      return this;
    }

    public Builder webConfigFile(String webConfigFile) {
      this.webConfigFile = webConfigFile;
      return this;
    }

    /** The settings, defaults filled in and checked: a bad value is a {@link ConfigException}. */
    public AgentSettings build() {
      AgentSettings s =
          new AgentSettings(
              kafka,
              host,
              job,
              files,
              stateDir,
              pollIntervalMs,
              checkpointIntervalMs,
              maxLineBytes,
              readBudgetBytes,
              kernelLog,
              nvidiaSmi,
              gpuSampleIntervalMs,
              spoolMaxBytes,
              spoolSegmentBytes,
              httpHost,
              httpPort,
              keepRaw,
              closeInactiveMs,
              procDir,
              deadLetterMaxBytes,
              scanIntervalMs,
              runSpoolRoot,
              slurm,
              kubernetes,
              quietMarkerMs,
              webConfigFile);
      s.validate("");
      return s;
    }
  }

  @Override
  public void validate(String path) {
    kafka.validate(path + "kafka.");
    slurm.validate(path + "slurm.");
    kubernetes.validate(path + "kubernetes.");
    Validated.require(!host.isBlank(), path + "host", "must not be empty");
    Validated.require(pollIntervalMs >= 10, path + "poll_interval_ms", "must be at least 10");
    Validated.require(
        checkpointIntervalMs >= 100, path + "checkpoint_interval_ms", "must be at least 100");
    Validated.require(
        maxLineBytes >= 1024 && maxLineBytes <= 16 << 20,
        path + "max_line_bytes",
        "must be 1 KiB..16 MiB");
    Validated.require(readBudgetBytes >= 4096, path + "read_budget_bytes", "must be at least 4096");
    Validated.require(
        gpuSampleIntervalMs == 0 || gpuSampleIntervalMs >= 100,
        path + "gpu_sample_interval_ms",
        "must be 0 (off) or at least 100");
    Validated.require(
        spoolSegmentBytes >= 1 << 16 && spoolMaxBytes >= 2 * spoolSegmentBytes,
        path + "spool_max_bytes",
        "must hold at least two segments (spool_segment_bytes >= 64 KiB)");
    Validated.require(closeInactiveMs >= 1000, path + "close_inactive_ms", "must be at least 1000");
    Validated.require(scanIntervalMs >= 0, path + "scan_interval_ms", "must not be negative");
    Validated.require(
        quietMarkerMs >= 0 && quietMarkerMs < closeInactiveMs,
        path + "quiet_marker_ms",
        "must be 0 (off) or less than close_inactive_ms");
    Validated.require(
        deadLetterMaxBytes >= 0, path + "dead_letter_max_bytes", "must not be negative");
    Validated.require(
        httpPort >= -1 && httpPort <= 65535, path + "http_port", "must be -1 (off) or 0..65535");
    Validated.require(
        webConfigFile == null
            || java.nio.file.Files.isReadable(java.nio.file.Path.of(webConfigFile)),
        path + "web_config_file",
        "no readable file there");
  }
}
