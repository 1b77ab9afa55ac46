package dev.cudawatch.ingest;

import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.common.config.Validated;
import dev.cudawatch.common.http.DefaultPorts;
import java.util.List;

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

  public static AgentSettings defaults() {
    return new AgentSettings(
        null, null, null, null, null, null, null, null, null, null, null, null, null, null, null,
        null, null, null, null, null, null, null, null, null, null, null);
  }

  public AgentSettings with(KafkaSettings k, List<String> globs, String state) {
    return withFiles(k, FileGlob.plain(globs), state);
  }

  /**
   * The same settings shipping to {@code k}, following {@code globs}, keeping state in {@code
   * state}.
   */
  public AgentSettings withFiles(KafkaSettings k, List<FileGlob> globs, String state) {
    Copy c = new Copy(this);
    c.kafka = k;
    c.files = globs;
    c.stateDir = state;
    return c.build();
  }

  /** The same settings with other sampling and HTTP settings (tests and local mode). */
  public AgentSettings withSources(String kernel, long sampleIntervalMs, int port) {
    Copy c = new Copy(this);
    c.kernelLog = kernel;
    c.gpuSampleIntervalMs = sampleIntervalMs;
    c.httpPort = port;
    return c.build();
  }

  /** The same settings with other file-closing and proc settings (tests). */
  public AgentSettings withNode(long closeInactive, String proc) {
    Copy c = new Copy(this);
    c.closeInactiveMs = closeInactive;
    c.procDir = proc;
    return c.build();
  }

  /** The same settings scanning the globs every {@code ms} (0: every round; tests). */
  public AgentSettings withScanInterval(long ms) {
    Copy c = new Copy(this);
    c.scanIntervalMs = ms;
    return c.build();
  }

  /** The same settings polling files every {@code ms} when a round read nothing (local mode). */
  public AgentSettings withPollInterval(long ms) {
    Copy c = new Copy(this);
    c.pollIntervalMs = ms;
    return c.build();
  }

  /** The same settings marking a file quiet after {@code ms} without a line (local mode). */
  public AgentSettings withQuietMarkers(long ms) {
    Copy c = new Copy(this);
    c.quietMarkerMs = ms;
    return c.build();
  }

  /** The same settings with another root for run spools (tests). */
  public AgentSettings withRunSpoolRoot(String root) {
    Copy c = new Copy(this);
    c.runSpoolRoot = root;
    return c.build();
  }

  /** The same settings with another nvidia-smi binary ({@code cudawatch local}, tests). */
  public AgentSettings withNvidiaSmi(String binary) {
    Copy c = new Copy(this);
    c.nvidiaSmi = binary;
    return c.build();
  }

  /** The same settings with other attribution sources (tests, {@code cudawatch local}). */
  public AgentSettings withAttribution(SlurmSourceSettings s, KubernetesSourceSettings k) {
    Copy c = new Copy(this);
    c.slurm = s;
    c.kubernetes = k;
    return c.build();
  }

  /** The same settings with TLS and basic auth from the web-config {@code file} (null: none). */
  public AgentSettings withWebConfig(String file) {
    Copy c = new Copy(this);
    c.webConfigFile = file;
    return c.build();
  }

  /** The same settings under another node name (tests). */
  public AgentSettings withHost(String name) {
    Copy c = new Copy(this);
    c.host = name;
    return c.build();
  }

  /** A mutable copy, so each {@code with...} names only what it changes. */
  private static final class Copy {
    KafkaSettings kafka;
    String host;
    String job;
    List<FileGlob> files;
    String stateDir;
    Long pollIntervalMs;
    Long checkpointIntervalMs;
    Integer maxLineBytes;
    Long readBudgetBytes;
    String kernelLog;
    String nvidiaSmi;
    Long gpuSampleIntervalMs;
    Long spoolMaxBytes;
    Long spoolSegmentBytes;
    String httpHost;
    Integer httpPort;
    Boolean keepRaw;
    Long closeInactiveMs;
    String procDir;
    Long deadLetterMaxBytes;
    Long scanIntervalMs;
    String runSpoolRoot;
    SlurmSourceSettings slurm;
    KubernetesSourceSettings kubernetes;
    Long quietMarkerMs;
    String webConfigFile;

    Copy(AgentSettings s) {
      kafka = s.kafka;
      host = s.host;
      job = s.job;
      files = s.files;
      stateDir = s.stateDir;
      pollIntervalMs = s.pollIntervalMs;
      checkpointIntervalMs = s.checkpointIntervalMs;
      maxLineBytes = s.maxLineBytes;
      readBudgetBytes = s.readBudgetBytes;
      kernelLog = s.kernelLog;
      nvidiaSmi = s.nvidiaSmi;
      gpuSampleIntervalMs = s.gpuSampleIntervalMs;
      spoolMaxBytes = s.spoolMaxBytes;
      spoolSegmentBytes = s.spoolSegmentBytes;
      httpHost = s.httpHost;
      httpPort = s.httpPort;
      keepRaw = s.keepRaw;
      closeInactiveMs = s.closeInactiveMs;
      procDir = s.procDir;
      deadLetterMaxBytes = s.deadLetterMaxBytes;
      scanIntervalMs = s.scanIntervalMs;
      runSpoolRoot = s.runSpoolRoot;
      slurm = s.slurm;
      kubernetes = s.kubernetes;
      quietMarkerMs = s.quietMarkerMs;
      webConfigFile = s.webConfigFile;
    }

    AgentSettings build() {
      return new AgentSettings(
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
