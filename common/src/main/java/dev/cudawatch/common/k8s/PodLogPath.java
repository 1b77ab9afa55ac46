package dev.cudawatch.common.k8s;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The pod and container a kubelet log file belongs to, from its path: {@code
 * /var/log/pods/<namespace>_<pod>_<uid>/<container>/<restart>.log} (and its rotations {@code
 * 0.log.20261122-101500}) or the {@code /var/log/containers/<pod>_<namespace>_<container>-<id>.log}
 * links. Namespace and pod names are DNS names and hold no {@code _}, so the parts split cleanly.
 *
 * @param namespace the pod's namespace
 * @param pod the pod's name
 * @param uid the pod's UID, or null (the /var/log/containers form does not carry it)
 * @param container the container's name
 */
public record PodLogPath(String namespace, String pod, String uid, String container) {
  private static final Pattern PODS =
      Pattern.compile(
          "(?:^|.*/)pods/([a-z0-9][-a-z0-9.]*)_([a-z0-9][-a-z0-9.]*)_([^/_]+)/([^/]+)/[^/]+");
  private static final Pattern CONTAINERS =
      Pattern.compile(
          "(?:^|.*/)containers/([a-z0-9][-a-z0-9.]*)_([a-z0-9][-a-z0-9.]*)_([a-z0-9][-a-z0-9]*)-[0-9a-f]{64}\\.log");

  /** The pod and container of {@code path}, or null when it is not a kubelet log path. */
  public static PodLogPath parse(String path) {
    if (path.length() > 4096) {
      return null;
    }
    Matcher m = PODS.matcher(path);
    if (m.matches()) {
      return new PodLogPath(m.group(1), m.group(2), m.group(3), m.group(4));
    }
    m = CONTAINERS.matcher(path);
    if (m.matches()) {
      return new PodLogPath(m.group(2), m.group(1), null, m.group(3));
    }
    return null;
  }

  /** {@code namespace/pod/container}: the key PodResources' answer is matched on. */
  public String key() {
    return key(namespace, pod, container);
  }

  public static String key(String namespace, String pod, String container) {
    return namespace + "/" + pod + "/" + container;
  }
}
