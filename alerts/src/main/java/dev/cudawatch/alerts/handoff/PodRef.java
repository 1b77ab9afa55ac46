package dev.cudawatch.alerts.handoff;

import dev.cudawatch.common.k8s.PodLogPath;
import dev.cudawatch.common.wire.Incident;

/**
 * The pod an incident happened in, from its stream's source: a kubelet log path (the agent and file
 * shippers: {@code /var/log/pods/NS_POD_UID/...}, {@code /var/log/containers/POD_NS_C-ID.log}) or
 * {@code NS/POD/CONTAINER} (OpenTelemetry's resource attributes). Null when it names no pod.
 */
record PodRef(String namespace, String name) {
  static PodRef of(Incident i) {
    String src = i.source();
    if (src == null || src.length() > 4096) {
      return null;
    }
    PodLogPath p = PodLogPath.parse(src);
    PodRef r =
        p != null
            ? new PodRef(p.namespace(), p.pod())
            : src.matches("[^/]+/[^/]+/[^/]+")
                ? new PodRef(src.split("/")[0], src.split("/")[1])
                : null;
    // only names the API accepts reach a request path
    return r != null && KubeApi.validNamespace(r.namespace) && KubeApi.validNodeName(r.name)
        ? r
        : null;
  }
}
