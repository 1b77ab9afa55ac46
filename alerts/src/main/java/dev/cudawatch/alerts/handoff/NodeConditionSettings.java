package dev.cudawatch.alerts.handoff;

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

  /** For the YAML binding and {@link Builder#build()}: a null is a key left out. */
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
    return builder().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  /** A builder holding these settings, to derive other settings from them. */
  public Builder toBuilder() {
    return new Builder()
        .enabled(enabled)
        .apiServerUrl(apiServerUrl)
        .tokenFile(tokenFile)
        .caFile(caFile)
        .conditionType(conditionType)
        .timeoutMs(timeoutMs)
        .maxAttempts(maxAttempts)
        .retryInitialMs(retryInitialMs)
        .heartbeatIntervalMs(heartbeatIntervalMs)
        .recommendationTtlMs(recommendationTtlMs)
        .podEvents(podEvents)
        .podEventsPerMinute(podEventsPerMinute)
        .podEventQueue(podEventQueue);
  }

  @Override
  public void validate(String path) {
    Validated.httpUrl(apiServerUrl, path + "api_server_url");
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

  /**
   * Builds settings in code; a value left unset takes its default (the canonical constructor's).
   * {@link #build()} does not validate, as the YAML binding does not: the loader checks, with the
   * file's line numbers.
   */
  public static final class Builder {
    private Boolean enabled;
    private String apiServerUrl;
    private String tokenFile;
    private String caFile;
    private String conditionType;
    private Long timeoutMs;
    private Integer maxAttempts;
    private Long retryInitialMs;
    private Long heartbeatIntervalMs;
    private Long recommendationTtlMs;
    private Boolean podEvents;
    private Integer podEventsPerMinute;
    private Integer podEventQueue;

    private Builder() {}

    public Builder enabled(Boolean enabled) {
      this.enabled = enabled;
      return this;
    }

    public Builder apiServerUrl(String apiServerUrl) {
      this.apiServerUrl = apiServerUrl;
      return this;
    }

    public Builder tokenFile(String tokenFile) {
      this.tokenFile = tokenFile;
      return this;
    }

    public Builder caFile(String caFile) {
      this.caFile = caFile;
      return this;
    }

    public Builder conditionType(String conditionType) {
      this.conditionType = conditionType;
      return this;
    }

    public Builder timeoutMs(Long timeoutMs) {
      this.timeoutMs = timeoutMs;
      return this;
    }

    public Builder maxAttempts(Integer maxAttempts) {
      this.maxAttempts = maxAttempts;
      return this;
    }

    public Builder retryInitialMs(Long retryInitialMs) {
      this.retryInitialMs = retryInitialMs;
      return this;
    }

    public Builder heartbeatIntervalMs(Long heartbeatIntervalMs) {
      this.heartbeatIntervalMs = heartbeatIntervalMs;
      return this;
    }

    public Builder recommendationTtlMs(Long recommendationTtlMs) {
      this.recommendationTtlMs = recommendationTtlMs;
      return this;
    }

    public Builder podEvents(Boolean podEvents) {
      this.podEvents = podEvents;
      return this;
    }

    public Builder podEventsPerMinute(Integer podEventsPerMinute) {
      this.podEventsPerMinute = podEventsPerMinute;
      return this;
    }

    public Builder podEventQueue(Integer podEventQueue) {
      this.podEventQueue = podEventQueue;
      return this;
    }

    public NodeConditionSettings build() {
      return new NodeConditionSettings(
          enabled,
          apiServerUrl,
          tokenFile,
          caFile,
          conditionType,
          timeoutMs,
          maxAttempts,
          retryInitialMs,
          heartbeatIntervalMs,
          recommendationTtlMs,
          podEvents,
          podEventsPerMinute,
          podEventQueue);
    }
  }
}
