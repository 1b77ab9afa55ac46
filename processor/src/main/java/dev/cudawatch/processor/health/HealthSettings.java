package dev.cudawatch.processor.health;

import dev.cudawatch.common.config.Validated;
import java.io.Serializable;
import java.util.List;
import java.util.Map;

/**
 * Settings of the step-time detectors, the GPU health ledger and the hand-off (the processor's
 * {@code health:} key).
 *
 * @param slowRankRatio a rank this many times slower than its job's other ranks' median is slow
 * @param slowRankSeconds ... when it stays so for this long (event time)
 * @param minPeers other ranks with step times needed to judge a rank
 * @param slowdownRatio the job's median step time this many times its past is a slowdown
 * @param slowdownBucketSeconds the job's pace is one median per bucket of this length
 * @param slowdownRecentBuckets buckets that must all be slow (how long it must last)
 * @param slowdownBaselineBuckets buckets of history needed before judging
 * @param ladderResets resets or reboots a GPU may be asked for before its next failure escalates to
 *     inspection (then RMA)
 * @param ladderResetsPerXid the same per Xid code ({@code "79": 1}), over {@code ladderResets}
 * @param episodeGapSeconds failures of one GPU closer than this are one failure (an Xid 48, its 63
 *     and the 154 that names the recovery)
 * @param ledgerTtlDays a GPU's ledger is forgotten after this many days without a failure
 * @param shadow rules, by alert name ({@code SlowRank}, {@code JobSlowdown}, {@code
 *     GpuRepairLadder}, {@code LemonGpu}, ...), that only record what they would have alerted (on
 *     {@code cudawatch.actions}, and counted) instead of alerting
 */
public record HealthSettings(
    Double slowRankRatio,
    Long slowRankSeconds,
    Integer minPeers,
    Double slowdownRatio,
    Long slowdownBucketSeconds,
    Integer slowdownRecentBuckets,
    Integer slowdownBaselineBuckets,
    Integer ladderResets,
    Map<String, Integer> ladderResetsPerXid,
    Long episodeGapSeconds,
    Long ledgerTtlDays,
    List<String> shadow)
    implements Validated, Serializable {

  /** For the YAML binding and {@link Builder#build()}: a null is a key left out. */
  public HealthSettings {
    slowRankRatio = slowRankRatio == null ? 1.3 : slowRankRatio;
    slowRankSeconds = slowRankSeconds == null ? 60L : slowRankSeconds;
    minPeers = minPeers == null ? 2 : minPeers;
    slowdownRatio = slowdownRatio == null ? 1.3 : slowdownRatio;
    slowdownBucketSeconds = slowdownBucketSeconds == null ? 10L : slowdownBucketSeconds;
    slowdownRecentBuckets = slowdownRecentBuckets == null ? 6 : slowdownRecentBuckets;
    slowdownBaselineBuckets = slowdownBaselineBuckets == null ? 6 : slowdownBaselineBuckets;
    ladderResets = ladderResets == null ? 2 : ladderResets;
    ladderResetsPerXid = ladderResetsPerXid == null ? Map.of() : Map.copyOf(ladderResetsPerXid);
    episodeGapSeconds = episodeGapSeconds == null ? 60L : episodeGapSeconds;
    ledgerTtlDays = ledgerTtlDays == null ? 30L : ledgerTtlDays;
    shadow = shadow == null ? List.of() : List.copyOf(shadow);
  }

  public static HealthSettings defaults() {
    return builder().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  /** A builder holding these settings, to derive other settings from them. */
  public Builder toBuilder() {
    return new Builder()
        .slowRankRatio(slowRankRatio)
        .slowRankSeconds(slowRankSeconds)
        .minPeers(minPeers)
        .slowdownRatio(slowdownRatio)
        .slowdownBucketSeconds(slowdownBucketSeconds)
        .slowdownRecentBuckets(slowdownRecentBuckets)
        .slowdownBaselineBuckets(slowdownBaselineBuckets)
        .ladderResets(ladderResets)
        .ladderResetsPerXid(ladderResetsPerXid)
        .episodeGapSeconds(episodeGapSeconds)
        .ledgerTtlDays(ledgerTtlDays)
        .shadow(shadow);
  }

  /** Resets or reboots allowed before {@code xid}'s next failure escalates. */
  public int resetsBeforeEscalation(Integer xid) {
    return xid == null
        ? ladderResets
        : ladderResetsPerXid.getOrDefault(String.valueOf(xid), ladderResets);
  }

  public boolean shadowed(String rule) {
    return shadow.contains(rule);
  }

  @Override
  public void validate(String path) {
    Validated.require(slowRankRatio > 1.0, path + "slow_rank_ratio", "must exceed 1");
    Validated.require(slowdownRatio > 1.0, path + "slowdown_ratio", "must exceed 1");
    Validated.require(slowRankSeconds >= 0, path + "slow_rank_seconds", "must be at least 0");
    Validated.require(minPeers >= 1, path + "min_peers", "must be at least 1");
    Validated.require(
        slowdownBucketSeconds >= 1, path + "slowdown_bucket_seconds", "must be at least 1");
    Validated.require(
        slowdownRecentBuckets >= 1 && slowdownRecentBuckets <= 32,
        path + "slowdown_recent_buckets",
        "must be 1..32");
    Validated.require(
        slowdownBaselineBuckets >= 1 && slowdownBaselineBuckets <= 32,
        path + "slowdown_baseline_buckets",
        "must be 1..32");
    Validated.require(
        slowdownRecentBuckets + slowdownBaselineBuckets <= 32,
        path + "slowdown_recent_buckets",
        "and slowdown_baseline_buckets together must be at most 32 (the history kept per job)");
    Validated.require(ladderResets >= 0, path + "ladder_resets", "must be at least 0");
    for (var e : ladderResetsPerXid.entrySet()) {
      Validated.require(
          e.getKey().matches("[0-9]{1,3}") && e.getValue() != null && e.getValue() >= 0,
          path + "ladder_resets_per_xid." + e.getKey(),
          "takes an Xid code and a count of at least 0");
    }
    Validated.require(ledgerTtlDays >= 1, path + "ledger_ttl_days", "must be at least 1");
    Validated.require(episodeGapSeconds >= 0, path + "episode_gap_seconds", "must be at least 0");
  }

  /**
   * Builds settings in code; a value left unset takes its default (the canonical constructor's).
   * {@link #build()} does not validate, as the YAML binding does not: the loader checks, with the
   * file's line numbers.
   */
  public static final class Builder {
    private Double slowRankRatio;
    private Long slowRankSeconds;
    private Integer minPeers;
    private Double slowdownRatio;
    private Long slowdownBucketSeconds;
    private Integer slowdownRecentBuckets;
    private Integer slowdownBaselineBuckets;
    private Integer ladderResets;
    private Map<String, Integer> ladderResetsPerXid;
    private Long episodeGapSeconds;
    private Long ledgerTtlDays;
    private List<String> shadow;

    private Builder() {}

    public Builder slowRankRatio(Double slowRankRatio) {
      this.slowRankRatio = slowRankRatio;
      return this;
    }

    public Builder slowRankSeconds(Long slowRankSeconds) {
      this.slowRankSeconds = slowRankSeconds;
      return this;
    }

    public Builder minPeers(Integer minPeers) {
      this.minPeers = minPeers;
      return this;
    }

    public Builder slowdownRatio(Double slowdownRatio) {
      this.slowdownRatio = slowdownRatio;
      return this;
    }

    public Builder slowdownBucketSeconds(Long slowdownBucketSeconds) {
      this.slowdownBucketSeconds = slowdownBucketSeconds;
      return this;
    }

    public Builder slowdownRecentBuckets(Integer slowdownRecentBuckets) {
      this.slowdownRecentBuckets = slowdownRecentBuckets;
      return this;
    }

    public Builder slowdownBaselineBuckets(Integer slowdownBaselineBuckets) {
      this.slowdownBaselineBuckets = slowdownBaselineBuckets;
      return this;
    }

    public Builder ladderResets(Integer ladderResets) {
      this.ladderResets = ladderResets;
      return this;
    }

    public Builder ladderResetsPerXid(Map<String, Integer> ladderResetsPerXid) {
      this.ladderResetsPerXid = ladderResetsPerXid;
      return this;
    }

    public Builder episodeGapSeconds(Long episodeGapSeconds) {
      this.episodeGapSeconds = episodeGapSeconds;
      return this;
    }

    public Builder ledgerTtlDays(Long ledgerTtlDays) {
      this.ledgerTtlDays = ledgerTtlDays;
      return this;
    }

    public Builder shadow(List<String> shadow) {
      this.shadow = shadow;
      return this;
    }

    public HealthSettings build() {
      return new HealthSettings(
          slowRankRatio,
          slowRankSeconds,
          minPeers,
          slowdownRatio,
          slowdownBucketSeconds,
          slowdownRecentBuckets,
          slowdownBaselineBuckets,
          ladderResets,
          ladderResetsPerXid,
          episodeGapSeconds,
          ledgerTtlDays,
          shadow);
    }
  }
}
