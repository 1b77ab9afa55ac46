package dev.cudawatch.processor.functions;

import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.processor.records.IncidentCodec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Joins application incidents with the kernel log's Xids on the same host and GPU within a few
 * seconds of event time, and emits the application incident again with the verdict the Xids give
 * ({@link XidVerdicts}: each Xid's verdict in taxonomy.yaml, e.g. Xid 13, 31 or 43 mean the
 * application faulted and the GPU is healthy; Xid 48, 79 or 95 make the hardware the suspect).
 * Which classes take a verdict is taxonomy.yaml's too. State lives only for the join window.
 */
public final class CorrelateXid extends KeyedProcessFunction<String, Incident, Incident> {
  private static final long serialVersionUID = 1L;

  public static final String APPLICATION_FAULT = XidVerdicts.APPLICATION_FAULT;
  public static final String HARDWARE_SUSPECT = XidVerdicts.HARDWARE_SUSPECT;
  public static final String DRIVER_SUSPECT = XidVerdicts.DRIVER_SUSPECT;

  private final long windowMs;
  private transient MapState<Long, List<Integer>> xids; // event time -> Xid codes
  private transient MapState<Long, List<Incident>>
      pending; // event time -> incidents awaiting a verdict

  public CorrelateXid(long windowMs) {
    this.windowMs = windowMs;
  }

  /**
   * The key of an incident the correlation can use, or null without a host. Where neither side
   * knows its GPU (records from a log shipper: no PCI-to-index map), the host stands for its GPUs.
   */
  public static String keyOf(Incident i) {
    Object gpu = i.fields().get("gpu");
    return i.host() == null ? null : i.host() + "|" + (gpu == null ? "?" : gpu);
  }

  public static boolean relevant(Incident i) {
    return keyOf(i) != null
        && i.root()
        && (XidVerdicts.xidClass().equals(i.incidentClass())
            || XidVerdicts.getsVerdict(i.incidentClass()));
  }

  @Override
  public void open(OpenContext ctx) {
    xids =
        getRuntimeContext()
            .getMapState(new MapStateDescriptor<>("xids", Types.LONG, Types.LIST(Types.INT)));
    pending =
        getRuntimeContext()
            .getMapState(
                new MapStateDescriptor<>("pending", Types.LONG, Types.LIST(IncidentCodec.TYPE)));
  }

  @Override
  public void processElement(Incident i, Context ctx, Collector<Incident> out) throws Exception {
    long t = time(i);
    if (XidVerdicts.xidClass().equals(i.incidentClass())) {
      if (!(i.fields().get("xid") instanceof Number x)) {
        return;
      }
      List<Integer> at = xids.get(t);
      List<Integer> codes = at == null ? new ArrayList<>() : new ArrayList<>(at);
      codes.add(x.intValue());
      xids.put(t, codes);
      // incidents already waiting may now get their verdict
      for (Map.Entry<Long, List<Incident>> e : new ArrayList<>(toList(pending.entries()))) {
        if (Math.abs(e.getKey() - t) <= windowMs) {
          List<Incident> still = new ArrayList<>();
          for (Incident p : e.getValue()) {
            String v = verdict(p, time(p));
            if (v != null) {
              out.collect(p.withVerdict(v));
            } else {
              still.add(p);
            }
          }
          if (still.isEmpty()) {
            pending.remove(e.getKey());
          } else {
            pending.put(e.getKey(), still);
          }
        }
      }
    } else {
      String v = verdict(i, t);
      if (v != null) {
        out.collect(i.withVerdict(v));
      } else {
        List<Incident> at = pending.get(t);
        List<Incident> list = at == null ? new ArrayList<>() : new ArrayList<>(at);
        list.add(i);
        pending.put(t, list);
      }
    }
    ctx.timerService().registerEventTimeTimer(t + windowMs);
  }

  @Override
  public void onTimer(long ts, OnTimerContext ctx, Collector<Incident> out) throws Exception {
    long horizon = ts - windowMs;
    for (Long k : new ArrayList<>(toList(xids.keys()))) {
      if (k <= horizon) {
        xids.remove(k);
      }
    }
    for (Long k : new ArrayList<>(toList(pending.keys()))) {
      if (k <= horizon) {
        pending.remove(k); // no Xid came: no verdict, the incident stands as it was
      }
    }
  }

  /** The verdict for an incident at {@code t} from the Xids within the window, or null. */
  private String verdict(Incident i, long t) throws Exception {
    List<Integer> near = new ArrayList<>();
    for (Map.Entry<Long, List<Integer>> e : xids.entries()) {
      if (Math.abs(e.getKey() - t) <= windowMs) {
        near.addAll(e.getValue());
      }
    }
    return XidVerdicts.verdict(near);
  }

  private static long time(Incident i) {
    return (i.eventTime() != null ? i.eventTime() : i.detectedTime()).toEpochMilli();
  }

  private static <T> List<T> toList(Iterable<T> it) {
    List<T> out = new ArrayList<>();
    it.forEach(out::add);
    return out;
  }
}
