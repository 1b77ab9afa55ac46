package dev.cudawatch.processor.health;

/**
 * One step time a rank printed (or, with negative seconds, its job's exit): its job, rank, where it
 * runs, when, and seconds per step. A Flink POJO (public fields, no-arg constructor), so it travels
 * with an explicit serializer, never Kryo.
 */
public class StepSample {
  public String job;
  public int rank;
  public String host;
  public Integer gpu;
  public String gpuUuid;
  public long eventTime;
  public double seconds;

  public StepSample() {}

  public StepSample(
      String job, int rank, String host, Integer gpu, String gpuUuid, long eventTime, double s) {
    this.job = job;
    this.rank = rank;
    this.host = host;
    this.gpu = gpu;
    this.gpuUuid = gpuUuid;
    this.eventTime = eventTime;
    this.seconds = s;
  }

  public String job() {
    return job;
  }

  /** The job exited (a {@code cudawatch run} exit record): its step-time state can go. */
  static StepSample exit(String job, long eventTime) {
    StepSample s = new StepSample(job, -1, null, null, null, eventTime, -1);
    return s;
  }

  boolean isExit() {
    return seconds < 0;
  }

  @Override
  public String toString() {
    return job + "/rank" + rank + "@" + eventTime + "=" + seconds + "s";
  }
}
