package dev.cudawatch.processor.jobs;

/**
 * A job seen using a GPU (or a process id) on a host: from the records of {@code cudawatch run},
 * which know the job's GPU and its child's pid. A Flink POJO, so its state needs no Kryo.
 */
public class GpuHolder {
  public String host;
  public String job;
  public Integer gpu;
  public Integer pid;
  public long firstSeen;
  public long lastSeen;
  public Long exitedAt;

  public GpuHolder() {}

  static GpuHolder of(String host, String job, Integer gpu, Integer pid, long at, boolean exit) {
    GpuHolder h = new GpuHolder();
    h.host = host;
    h.job = job;
    h.gpu = gpu;
    h.pid = pid;
    h.firstSeen = at;
    h.lastSeen = at;
    h.exitedAt = exit ? at : null;
    return h;
  }

  String key() {
    return job + "|" + gpu + "|" + pid;
  }
}
