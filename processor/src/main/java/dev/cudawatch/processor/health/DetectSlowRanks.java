package dev.cudawatch.processor.health;

import dev.cudawatch.common.wire.Incident;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Finds the rank that holds its job back (fail-slow), keyed by job: each rank's pace is the median
 * of its last steps; a rank whose pace stays {@code slow_rank_ratio} times the median of its peers'
 * paces for {@code slow_rank_seconds} (event time) is a {@code slow_rank} incident naming its host,
 * GPU and how much slower it is, once per episode (a rank back within half the margin may be
 * reported again later). Its own history rides along: the pace it kept while it was not slow. State
 * is bounded (at most {@link #MAX_RANKS} ranks, a few steps each; ranks silent for {@link #STALE}
 * are forgotten) and all of it goes when the job exits, or after {@code ttl} without step times.
 */
public final class DetectSlowRanks extends KeyedProcessFunction<String, StepSample, Incident> {
  private static final long serialVersionUID = 1L;

  static final int MAX_RANKS = 4096;

  /** A rank that printed no step time for this long is not a peer any more. */
  static final Duration STALE = Duration.ofMinutes(5);

  private final double ratio;
  private final long slowMs;
  private final int minPeers;
  private final long ttlMs;

  private transient MapState<Integer, RankPace> ranks;
  private transient ValueState<Long> cleanup;
  private transient Counter found;
  private transient Counter overflow;

  public DetectSlowRanks(HealthSettings s, Duration ttl) {
    this.ratio = s.slowRankRatio();
    this.slowMs = s.slowRankSeconds() * 1000;
    this.minPeers = s.minPeers();
    this.ttlMs = ttl.toMillis();
  }

  @Override
  public void open(OpenContext ctx) {
    ranks =
        getRuntimeContext()
            .getMapState(
                new MapStateDescriptor<>("ranks", Types.INT, TypeInformation.of(RankPace.class)));
    cleanup = getRuntimeContext().getState(new ValueStateDescriptor<>("cleanup", Types.LONG));
    found = getRuntimeContext().getMetricGroup().counter("cudawatch_slow_ranks");
    overflow = getRuntimeContext().getMetricGroup().counter("cudawatch_slow_rank_ranks_dropped");
  }

  @Override
  public void processElement(StepSample s, Context ctx, Collector<Incident> out) throws Exception {
    if (s.isExit()) {
      clear(ctx);
      return;
    }
    RankPace mine = ranks.get(s.rank);
    if (mine == null) {
      if (size() >= MAX_RANKS) {
        overflow.inc();
        return;
      }
      mine = new RankPace();
    }
    mine.add(s);
    List<Double> peers = new ArrayList<>();
    List<Integer> stale = new ArrayList<>();
    for (Map.Entry<Integer, RankPace> e : ranks.entries()) {
      if (e.getKey() == s.rank) {
        continue;
      }
      RankPace p = e.getValue();
      if (p.lastSeen < s.eventTime - STALE.toMillis()) {
        stale.add(e.getKey());
      } else if (!Double.isNaN(p.pace())) {
        peers.add(p.pace());
      }
    }
    for (Integer r : stale) {
      ranks.remove(r);
    }
    judge(s, mine, peers, ctx, out);
    ranks.put(s.rank, mine);
    long now = ctx.timerService().currentProcessingTime();
    if (cleanup.value() != null) {
      ctx.timerService().deleteProcessingTimeTimer(cleanup.value());
    }
    cleanup.update(now + ttlMs);
    ctx.timerService().registerProcessingTimeTimer(now + ttlMs);
  }

  private void judge(
      StepSample s, RankPace mine, List<Double> peers, Context ctx, Collector<Incident> out) {
    double own = mine.pace();
    if (Double.isNaN(own) || peers.size() < minPeers) {
      return;
    }
    double[] a = peers.stream().mapToDouble(Double::doubleValue).toArray();
    double median = Medians.of(a, a.length);
    double r = own / median;
    if (r >= ratio) {
      if (mine.slowSince < 0) {
        mine.slowSince = s.eventTime;
      }
      if (!mine.reported && s.eventTime - mine.slowSince >= slowMs) {
        mine.reported = true;
        found.inc();
        out.collect(
            StepIncidents.slowRank(
                s.job,
                s.rank,
                mine,
                own,
                median,
                peers.size() + 1,
                s.eventTime,
                Instant.ofEpochMilli(ctx.timerService().currentProcessingTime())));
      }
      return;
    }
    mine.slowSince = -1;
    mine.ownBaseline = own;
    if (r < 1 + (ratio - 1) / 2) {
      mine.reported = false;
    }
  }

  private int size() throws Exception {
    int n = 0;
    for (Integer ignored : ranks.keys()) {
      n++;
    }
    return n;
  }

  private void clear(Context ctx) throws Exception {
    if (cleanup.value() != null) {
      ctx.timerService().deleteProcessingTimeTimer(cleanup.value());
    }
    ranks.clear();
    cleanup.clear();
  }

  @Override
  public void onTimer(long ts, OnTimerContext ctx, Collector<Incident> out) throws Exception {
    if (cleanup.value() != null && ts >= cleanup.value()) {
      ranks.clear();
      cleanup.clear();
    }
  }
}
