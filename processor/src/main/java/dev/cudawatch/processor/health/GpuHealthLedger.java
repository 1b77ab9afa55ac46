package dev.cudawatch.processor.health;

import dev.cudawatch.common.wire.Action;
import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.diagnosis.taxonomy.Taxonomy;
import dev.cudawatch.processor.records.AlertCodec;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * The GPU health ledger, keyed by GPU (its UUID; the host and PCI address or index when no UUID is
 * known): failures that may be the GPU's (the taxonomy's lemon classes), their Xids and verdicts,
 * slow-rank findings, and the recoveries the driver asked for. Failures closer than {@code
 * episode_gap_seconds} are one (an Xid 48, its 63 and the 154 naming the recovery).
 *
 * <p>The repair ladder: a failure that asks for a reset or reboot gets that recommendation while
 * the GPU has had fewer than N of them (per Xid, default 2); once it has had N and fails again, the
 * recommendation escalates to hardware inspection (rung 1), and to RMA (rung 2) if it fails once
 * more. Every recommendation goes to {@code cudawatch.actions}, observe-only; an escalation also
 * raises a {@code GpuRepairLadder} alert (side output). The ledger is forgotten {@code
 * ledger_ttl_days} after the GPU's last failure.
 */
public final class GpuHealthLedger extends KeyedProcessFunction<String, Incident, Action> {
  private static final long serialVersionUID = 1L;

  public static final OutputTag<Alert> ALERTS =
      new OutputTag<>("repair-ladder-alerts", AlertCodec.TYPE);
  public static final String ALERT_NAME = "GpuRepairLadder";

  private static final Set<String> LEMON = Taxonomy.builtIn().lemonClasses();

  private final HealthSettings settings;
  private final long gapMs;
  private final long ttlMs;

  private transient ValueState<GpuHealth> ledger;
  private transient ValueState<Long> cleanup;
  private transient Counter escalations;

  public GpuHealthLedger(HealthSettings s) {
    this.settings = s;
    this.gapMs = s.episodeGapSeconds() * 1000;
    this.ttlMs = Duration.ofDays(s.ledgerTtlDays()).toMillis();
  }

  /** The GPU an incident is about: UUID first, never the bare index alone. */
  public static String keyOf(Incident i) {
    Object uuid = i.fields().get("gpu_uuid");
    if (uuid != null) {
      return "uuid:" + uuid;
    }
    if (i.host() == null) {
      return null;
    }
    Object pci = i.fields().get("pci");
    if (pci != null) {
      return i.host() + "|pci:" + pci;
    }
    Object gpu = i.fields().get("gpu");
    return gpu == null ? null : i.host() + "|gpu:" + gpu;
  }

  /** Root failures that may be the GPU's, and slow-rank findings, of a known GPU. */
  public static boolean relevant(Incident i) {
    return i.root()
        && (LEMON.contains(i.incidentClass()) || StepIncidents.SLOW_RANK.equals(i.incidentClass()))
        && keyOf(i) != null;
  }

  private transient TypeSerializer<GpuHealth> copier;

  @Override
  public void open(OpenContext ctx) {
    ValueStateDescriptor<GpuHealth> d =
        new ValueStateDescriptor<>("ledger", TypeInformation.of(GpuHealth.class));
    ledger = getRuntimeContext().getState(d);
    copier = d.getSerializer();
    cleanup = getRuntimeContext().getState(new ValueStateDescriptor<>("cleanup", Types.LONG));
    escalations = getRuntimeContext().getMetricGroup().counter("cudawatch_repair_escalations");
  }

  @Override
  public void processElement(Incident i, Context ctx, Collector<Action> out) throws Exception {
    // a copy: the heap backend hands out the stored object itself, and an incident that fails
    // half-way (dead-lettered by the guard) must leave the GPU's ledger as it was
    GpuHealth stored = ledger.value();
    GpuHealth g = stored == null ? new GpuHealth() : copier.copy(stored);
    g.host = i.host() != null ? i.host() : g.host;
    Object gpu = i.fields().get("gpu");
    g.gpu = gpu != null ? gpu.toString() : g.gpu;
    Object uuid = i.fields().get("gpu_uuid");
    g.gpuUuid = uuid != null ? uuid.toString() : g.gpuUuid;
    Object pci = i.fields().get("pci");
    g.pci = pci != null ? pci.toString() : g.pci;
    long h = StepIncidents.fnv(i.id());
    boolean fresh = GpuHealth.remember(g.seen, g.seenCount, h);
    if (fresh) {
      g.seenCount++;
    }
    if (i.verdict() != null && GpuHealth.remember(g.verdictSeen, g.verdictCount, h)) {
      g.verdictCount++;
      switch (i.verdict()) {
        case "hardware_suspect" -> g.hardwareVerdicts++;
        case "driver_suspect" -> g.driverVerdicts++;
        case "application_fault" -> g.applicationVerdicts++;
        default -> {}
      }
    }
    if (fresh) {
      record(i, g, ctx, out);
    }
    ledger.update(g);
    long now = ctx.timerService().currentProcessingTime();
    if (cleanup.value() != null) {
      ctx.timerService().deleteProcessingTimeTimer(cleanup.value());
    }
    cleanup.update(now + ttlMs);
    ctx.timerService().registerProcessingTimeTimer(now + ttlMs);
  }

  private void record(Incident i, GpuHealth g, Context ctx, Collector<Action> out) {
    long t = (i.eventTime() != null ? i.eventTime() : i.detectedTime()).toEpochMilli();
    if (StepIncidents.SLOW_RANK.equals(i.incidentClass())) {
      g.slowRankFindings++;
      out.collect(action(i, g, "check_slow_gpu", "slow rank: " + i.summary(), t));
      return;
    }
    if ("gpu_xid".equals(i.incidentClass())) {
      g.xids++;
    }
    if (g.episodeStart == Long.MIN_VALUE || t - g.episodeStart > gapMs) {
      g.incidents++;
      g.firstFailure = g.incidents == 1 ? t : Math.min(g.firstFailure, t);
      g.lastFailure = Math.max(g.lastFailure, t);
      g.episodeStart = t;
      g.episodeCounted = false;
    }
    String recovery = RecoveryActions.of(i);
    if (recovery == null || g.episodeCounted) {
      return;
    }
    g.episodeCounted = true;
    Integer xid = RecoveryActions.xid(i);
    int allowed = settings.resetsBeforeEscalation(xid);
    if (g.recoveries < allowed) {
      g.recoveries++;
      g.lastRecovery = recovery;
      out.collect(
          action(
              i,
              g,
              recovery,
              "the driver asks for it ("
                  + recovery
                  + " "
                  + g.recoveries
                  + " of "
                  + allowed
                  + " before escalation)",
              t));
      return;
    }
    g.ladderLevel = Math.min(2, g.ladderLevel + 1);
    String step = g.ladderLevel == 1 ? "inspect" : "rma";
    String reason =
        "failing again after "
            + g.recoveries
            + " "
            + (g.lastRecovery == null ? "recoveries" : g.lastRecovery + "s")
            + (g.ladderLevel == 1 ? ": inspect the hardware" : " and an inspection: RMA");
    escalations.inc();
    Action a = action(i, g, step, reason, t);
    out.collect(a);
    alert(a, g, i, ctx);
  }

  private Action action(Incident i, GpuHealth g, String what, String reason, long t) {
    return new Action(
        WireJson.VERSION,
        "action:" + String.format("%016x", StepIncidents.fnv(i.id() + "|" + what)),
        Action.RECOMMENDATION,
        what,
        reason,
        g.host,
        g.gpu,
        g.gpuUuid,
        i.job(),
        RecoveryActions.xid(i),
        i.id(),
        g.ladderLevel,
        g.recoveries,
        g.incidents,
        g.mtbiSeconds(),
        Instant.ofEpochMilli(t),
        Map.of());
  }

  private static void alert(Action a, GpuHealth g, Incident i, Context ctx) {
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put("alertname", ALERT_NAME);
    labels.put("severity", "critical");
    labels.put("host", a.host() == null ? "unknown" : a.host());
    labels.put("gpu", a.gpu() == null ? "unknown" : a.gpu());
    if (a.gpuUuid() != null) {
      labels.put("gpu_uuid", a.gpuUuid());
    }
    if (g.pci != null) {
      labels.put("pci", g.pci);
    }
    Map<String, String> ann = new LinkedHashMap<>();
    ann.put(
        "summary",
        "GPU "
            + labels.get("gpu")
            + " on "
            + labels.get("host")
            + " keeps failing: "
            + a.action()
            + " ("
            + a.reason()
            + ")");
    ann.put("ladder_level", String.valueOf(a.ladderLevel()));
    ann.put("recoveries", String.valueOf(a.recoveries()));
    ann.put("incidents", String.valueOf(a.incidents()));
    if (a.mtbiSeconds() != null) {
      ann.put("mtbi_seconds", String.valueOf(Math.round(a.mtbiSeconds())));
    }
    ann.put("value", String.valueOf(a.ladderLevel()));
    ann.put("incident_id", i.id());
    ctx.output(
        ALERTS,
        new Alert(
            WireJson.VERSION,
            Alert.fingerprintOf(labels),
            Alert.State.FIRING,
            labels,
            ann,
            a.at(),
            a.at().plus(Duration.ofDays(1))));
  }

  @Override
  public void onTimer(long ts, OnTimerContext ctx, Collector<Action> out) throws Exception {
    if (cleanup.value() != null && ts >= cleanup.value()) {
      ledger.clear();
      cleanup.clear();
    }
  }
}
