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
    return new HealthSettings(
        null, null, null, null, null, null, null, null, null, null, null, null);
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
}
