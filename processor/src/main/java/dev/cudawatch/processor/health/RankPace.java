package dev.cudawatch.processor.health;

/**
 * What the slow-rank detector keeps of one rank: its last step times (a ring), where it runs, and
 * since when it has been slow. A Flink POJO of primitive fields and a primitive array, so its state
 * serializer is explicit (PojoSerializer), never Kryo.
 */
public class RankPace {
  /** Step times remembered per rank; the median of these is the rank's pace. */
  static final int WINDOW = 5;

  public String host;
  public Integer gpu;
  public String gpuUuid;
  public double[] recent = new double[WINDOW];
  public int count;
  public long lastSeen;
  public long slowSince = -1;
  public boolean reported;
  public double ownBaseline = Double.NaN;

  public RankPace() {}

  void add(StepSample s) {
    recent[count % WINDOW] = s.seconds;
    count++;
    lastSeen = Math.max(lastSeen, s.eventTime);
    host = s.host;
    gpu = s.gpu != null ? s.gpu : gpu;
    gpuUuid = s.gpuUuid != null ? s.gpuUuid : gpuUuid;
  }

  /** The rank's pace: the median of its last steps, or NaN before it has enough of them. */
  double pace() {
    return count < 3 ? Double.NaN : Medians.of(recent, Math.min(count, WINDOW));
  }
}
