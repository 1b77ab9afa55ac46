package dev.cudawatch.alerts.handoff;

import dev.cudawatch.alerts.AlertsSettings;
import dev.cudawatch.common.config.Validated;

/**
 * The hand-off to remediation as a Kubernetes node condition ({@code node_conditions:} in the
 * alerts service's YAML), as node-problem-detector writes them. Off by default: cudawatch only
 * observes. Even when on it writes the node's status condition and nothing else: it never cordons,
 * drains or resets.
 *
 * @param enabled write the condition; off, recommendations stay on the topic, page and API
 * @param apiServerUrl the Kubernetes API server (in a pod: the {@code kubernetes.default.svc}
 *     Service)
 * @param tokenFile the service account's bearer token, read again before each write (kubelet
 *     rotates it); never logged
 * @param caFile the CA that signed the API server's certificate (for https URLs)
 * @param conditionType the condition's type on the node; {@code True} means a GPU of the node has
 *     an open recommendation, as node-problem-detector's problem conditions do
 * @param timeoutMs connect and request timeout of one call to the API server
 * @param maxAttempts tries per write (a 5xx or an I/O error is tried again, with a doubling delay)
 * @param retryInitialMs delay before the second try
 * @param heartbeatIntervalMs how often every known node's condition is written again (its
 *     lastHeartbeatTime), so a stale condition shows
 * @param recommendationTtlMs how long a reset, reboot or slow-GPU recommendation keeps the
 *     condition True; an escalation (inspect, RMA) keeps it while the GPU is held
 * @param podEvents post a Kubernetes Event on the failing pod of each paging incident (reason: the
 *     class; note: the summary and the incident page's link), with the API server, token and CA
 *     above; independent of {@code enabled}; off by default
 * @param podEventsPerMinute Events posted per minute at most; past it they wait in the queue
 * @param podEventQueue Events waiting at most; past it new ones are dropped and counted
 */
public record NodeConditionSettings(
    Boolean enabled,
    String apiServerUrl,
    String tokenFile,
    String caFile,
    String conditionType,
    Long timeoutMs,
    Integer maxAttempts,
    Long retryInitialMs,
    Long heartbeatIntervalMs,
    Long recommendationTtlMs,
    Boolean podEvents,
    Integer podEventsPerMinute,
    Integer podEventQueue)
    implements Validated {

  public NodeConditionSettings {
    enabled = enabled == null ? Boolean.FALSE : enabled;
    apiServerUrl = apiServerUrl == null ? "https://kubernetes.default.svc" : apiServerUrl;
    tokenFile =
        tokenFile == null ? "/var/run/secrets/kubernetes.io/serviceaccount/token" : tokenFile;
    caFile = caFile == null ? "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt" : caFile;
    conditionType = conditionType == null ? "CudawatchGpuProblem" : conditionType;
    timeoutMs = timeoutMs == null ? 5_000L : timeoutMs;
    maxAttempts = maxAttempts == null ? 3 : maxAttempts;
    retryInitialMs = retryInitialMs == null ? 500L : retryInitialMs;
    heartbeatIntervalMs = heartbeatIntervalMs == null ? 300_000L : heartbeatIntervalMs;
    recommendationTtlMs = recommendationTtlMs == null ? 86_400_000L : recommendationTtlMs;
    podEvents = podEvents == null ? Boolean.FALSE : podEvents;
    podEventsPerMinute = podEventsPerMinute == null ? 60 : podEventsPerMinute;
    podEventQueue = podEventQueue == null ? 1_000 : podEventQueue;
  }

  public static NodeConditionSettings defaults() {
    return new NodeConditionSettings(
        null, null, null, null, null, null, null, null, null, null, null, null, null);
  }

  /** These settings, on, against {@code url} with {@code tokenFile} (for tests). */
  public NodeConditionSettings on(String url, String token, long heartbeatMs) {
    return new NodeConditionSettings(
        true,
        url,
        token,
        caFile,
        conditionType,
        timeoutMs,
        maxAttempts,
        50L,
        heartbeatMs,
        recommendationTtlMs,
        podEvents,
        podEventsPerMinute,
        podEventQueue);
  }

  /** These settings with pod Events on, against {@code url} with {@code tokenFile} (for tests). */
  public NodeConditionSettings withPodEvents(String url, String token, int perMinute, int queue) {
    return new NodeConditionSettings(
        enabled,
        url,
        token,
        caFile,
        conditionType,
        timeoutMs,
        maxAttempts,
        50L,
        heartbeatIntervalMs,
        recommendationTtlMs,
        true,
        perMinute,
        queue);
  }

  @Override
  public void validate(String path) {
    AlertsSettings.checkUrl(apiServerUrl, path + "api_server_url");
    Validated.require(
        conditionType.matches("[A-Z][A-Za-z0-9]{0,62}"),
        path + "condition_type",
        "must be a CamelCase name such as CudawatchGpuProblem");
    Validated.require(
        timeoutMs >= 100 && timeoutMs <= 120_000, path + "timeout_ms", "must be 100..120000");
    Validated.require(
        maxAttempts >= 1 && maxAttempts <= 10, path + "max_attempts", "must be 1..10");
    Validated.require(
        retryInitialMs >= 10 && retryInitialMs <= 60_000,
        path + "retry_initial_ms",
        "must be 10..60000");
    Validated.require(
        heartbeatIntervalMs >= 1_000, path + "heartbeat_interval_ms", "must be at least 1000");
    Validated.require(
        recommendationTtlMs >= 60_000, path + "recommendation_ttl_ms", "must be at least 60000");
    Validated.require(
        podEventsPerMinute >= 1 && podEventsPerMinute <= 6_000,
        path + "pod_events_per_minute",
        "must be 1..6000");
    Validated.require(
        podEventQueue >= 1 && podEventQueue <= 100_000,
        path + "pod_event_queue",
        "must be 1..100000");
  }
}
