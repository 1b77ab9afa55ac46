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
 */
public record SlurmSourceSettings(
    Boolean enabled,
    String sidecarDir,
    List<String> pathPatterns,
    String scontrol,
    String nodeName,
    Long cacheTtlMs,
    Integer maxJobs)
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
  }

  public static SlurmSourceSettings defaults() {
    return new SlurmSourceSettings(null, null, null, null, null, null, null);
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
  }
}
