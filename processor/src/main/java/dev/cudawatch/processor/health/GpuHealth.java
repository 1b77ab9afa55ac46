package dev.cudawatch.processor.health;

/**
 * One GPU's health ledger: its failures and when, the Xids and verdicts among them, slow-rank
 * findings, the resets and reboots the driver asked for, and the rung of the repair ladder it is
 * on. A Flink POJO of primitive fields and primitive arrays (explicit PojoSerializer, never Kryo),
 * bounded: the ids it remembers to count a re-published incident once are a ring of {@link #SEEN}.
 */
public class GpuHealth {
  static final int SEEN = 16;

  public String host;
  public String gpu;
  public String gpuUuid;
  public String pci;
  public int incidents;
  public long firstFailure;
  public long lastFailure;
  public int xids;
  public int hardwareVerdicts;
  public int driverVerdicts;
  public int applicationVerdicts;
  public int slowRankFindings;
  public int recoveries;
  public String lastRecovery;
  public int ladderLevel;
  public long episodeStart = Long.MIN_VALUE;
  public boolean episodeCounted;
  public long[] seen = new long[SEEN];
  public long[] verdictSeen = new long[SEEN];
  public int seenCount;
  public int verdictCount;

  public GpuHealth() {}

  /** Mean time between failures in seconds, or null before the second. */
  Double mtbiSeconds() {
    return incidents < 2 ? null : (lastFailure - firstFailure) / 1000.0 / (incidents - 1);
  }

  /** Remembers {@code h}; false when it was already there. */
  static boolean remember(long[] ring, int count, long h) {
    for (int i = 0; i < Math.min(count, ring.length); i++) {
      if (ring[i] == h) {
        return false;
      }
    }
    ring[count % ring.length] = h;
    return true;
  }
}
