package dev.cudawatch.common.http;

/**
 * The HTTP ports cudawatch listens on unless told otherwise: the one table every default, config
 * and doc follows. Prometheus' exporter range 9100-9999 is fully allocated, and GPU nodes run
 * dcgm-exporter on 9400 and node_exporter on 9100, so both lie outside it and away from what GPU
 * nodes commonly run (Slurm 6817-6820, TensorBoard 6006, Ray 8265, torch.distributed 29500, the
 * kubelet 10250).
 */
public final class DefaultPorts {
  /** The alerts service and {@code cudawatch local}: metrics, incidents API, incident pages. */
  public static final int ALERTS_HTTP = 7460;

  /** The node agent's {@code /metrics} and {@code /healthz}. */
  public static final int AGENT_HTTP = 7461;

  /** The alerts service's address on this machine, for clients and links. */
  public static final String ALERTS_LOCAL_URL = "http://127.0.0.1:" + ALERTS_HTTP;

  private DefaultPorts() {}
}
