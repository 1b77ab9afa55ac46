package dev.cudawatch.ingest;

import dev.cudawatch.common.config.Validated;
import dev.cudawatch.ingest.attribution.SlurmPathPattern;
import java.util.List;

/**
 * The agent's Slurm attribution source ({@code slurm:} in agent.yaml).
 *
 * @param enabled ask Slurm at all (default true: without sidecars, matching paths or scontrol it
 *     finds nothing and costs nothing)
 * @param sidecarDir where {@code deploy/slurm/prolog.sh} writes one {@code <jobid>.json} per job
 * @param pathPatterns log path patterns that name the job ({@code %j}, {@code %A_%a}, {@code *},
 *     {@code **})
 * @param scontrol the scontrol binary for jobs without a sidecar; empty turns the fallback off
 * @param nodeName this node's Slurm name (default: the host name up to the first dot)
 * @param cacheTtlMs how long scontrol's answer for a job is kept
 * @param maxJobs jobs kept in the caches (sidecars read, scontrol answers)
 * @param followSidecarPaths also follow the output files that this node's sidecars name (regular
 *     files owned by the job's user): only this node's jobs, without a glob over a shared /home
 * @param scontrolTimeoutMs how long one scontrol call may take before it is killed (it runs off the
 *     read thread: lines ship meanwhile, and get the answer once it comes)
 */
public record SlurmSourceSettings(
    Boolean enabled,
    String sidecarDir,
    List<String> pathPatterns,
    String scontrol,
    String nodeName,
    Long cacheTtlMs,
    Integer maxJobs,
    Boolean followSidecarPaths,
    Long scontrolTimeoutMs)
    implements Validated {
  public static final List<String> DEFAULT_PATTERNS =
      List.of("slurm-%j.out", "slurm-%A_%a.out", "/var/log/training/%j/**");

  public SlurmSourceSettings {
    enabled = enabled == null ? Boolean.TRUE : enabled;
    sidecarDir = sidecarDir == null ? "/run/cudawatch/slurm" : sidecarDir;
    pathPatterns = pathPatterns == null ? DEFAULT_PATTERNS : List.copyOf(pathPatterns);
    scontrol = scontrol == null ? "scontrol" : scontrol;
    cacheTtlMs = cacheTtlMs == null ? 60_000L : cacheTtlMs;
    maxJobs = maxJobs == null ? 4096 : maxJobs;
    followSidecarPaths = followSidecarPaths == null ? Boolean.FALSE : followSidecarPaths;
    scontrolTimeoutMs = scontrolTimeoutMs == null ? 5_000L : scontrolTimeoutMs;
  }

  public static SlurmSourceSettings defaults() {
    return new SlurmSourceSettings(null, null, null, null, null, null, null, null, null);
  }

  /** These settings with the source turned on or off (off follows no sidecar path either). */
  public SlurmSourceSettings withEnabled(boolean on) {
    return new SlurmSourceSettings(
        on,
        sidecarDir,
        pathPatterns,
        scontrol,
        nodeName,
        cacheTtlMs,
        maxJobs,
        on && followSidecarPaths,
        scontrolTimeoutMs);
  }

  /** The patterns compiled (validate() has checked them). */
  public List<SlurmPathPattern> patterns() {
    return pathPatterns.stream().map(SlurmPathPattern::compile).toList();
  }

  @Override
  public void validate(String path) {
    for (String p : pathPatterns) {
      try {
        SlurmPathPattern.compile(p);
      } catch (IllegalArgumentException e) {
        Validated.require(false, path + "path_patterns", e.getMessage());
      }
    }
    Validated.require(cacheTtlMs >= 1000, path + "cache_ttl_ms", "must be at least 1000");
    Validated.require(
        maxJobs >= 1 && maxJobs <= 1_000_000, path + "max_jobs", "must be 1..1000000");
    Validated.require(
        scontrolTimeoutMs >= 100 && scontrolTimeoutMs <= 600_000,
        path + "scontrol_timeout_ms",
        "must be 100..600000");
    Validated.require(
        enabled || !followSidecarPaths,
        path + "follow_sidecar_paths",
        "needs slurm.enabled: true (the sidecars are the Slurm source's)");
  }
}
