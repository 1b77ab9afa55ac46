package dev.cudawatch.alerts.notify;

import dev.cudawatch.common.config.Validated;
import java.util.List;

/**
 * Where and how alerts are sent ({@code notifications:} in the alerts service's YAML). Timing
 * follows Alertmanager's route settings, so its users know them already.
 *
 * @param alertmanagerUrl Alertmanager base URL: alerts are pushed to its API v2, firing ones again
 *     every {@code resend_interval_ms}; Alertmanager then groups, silences and routes them
 * @param webhookUrl receives Alertmanager's webhook payload (version 4)
 * @param slackWebhookUrl a Slack incoming webhook
 * @param stateDir the outbox and the notifier's state; survives restarts
 * @param outboxMaxEntries notifications kept per receiver while it is unreachable; past it the
 *     oldest are dropped and counted
 * @param groupBy labels that group alerts into one webhook or Slack message
 * @param groupWaitMs how long a new group waits for more alerts before its first message
 * @param groupIntervalMs how long a group waits before a message about new changes
 * @param repeatIntervalMs how long before a still-firing group is sent again
 * @param resendIntervalMs how often firing alerts are pushed to Alertmanager again
 * @param retryInitialMs first retry delay; doubled per failure, with jitter
 * @param retryMaxMs longest retry delay
 * @param timeoutMs HTTP timeout of one delivery
 * @param maxAlertsPerMessage alerts in one webhook or Slack message; the rest are counted as {@code
 *     truncatedAlerts}
 * @param externalUrl this service's URL as people reach it, for the incident-page links in every
 *     notification; unset, the address it serves ({@code http_host}, or the machine's hostname when
 *     that is 0.0.0.0 or ::, and the port it bound)
 * @param outboxMaxBytes bytes of notifications kept per receiver while it is unreachable; past it
 *     the oldest are dropped and counted, as past {@code outbox_max_entries}
 * @param maxAgeMs how long a notification is retried (the receiver down, or answering 5xx) before
 *     it is dead-lettered (moved beside the outbox and counted) so it no longer holds the queue
 * @param runbookBaseUrl where each class's section of the taxonomy is read ({@code runbook_url} is
 *     this plus {@code #class}); unset, this service's own {@code /taxonomy} page, which has the
 *     same sections under the same anchors as {@code docs/taxonomy.md} and needs no internet
 */
public record NotifySettings(
    String alertmanagerUrl,
    String webhookUrl,
    String slackWebhookUrl,
    String stateDir,
    Integer outboxMaxEntries,
    List<String> groupBy,
    Long groupWaitMs,
    Long groupIntervalMs,
    Long repeatIntervalMs,
    Long resendIntervalMs,
    Long retryInitialMs,
    Long retryMaxMs,
    Long timeoutMs,
    Integer maxAlertsPerMessage,
    String externalUrl,
    Long outboxMaxBytes,
    Long maxAgeMs,
    String runbookBaseUrl)
    implements Validated {

  public NotifySettings {
    stateDir = stateDir == null ? "state/alerts" : stateDir;
    outboxMaxEntries = outboxMaxEntries == null ? 10_000 : outboxMaxEntries;
    groupBy = groupBy == null ? List.of("alertname") : List.copyOf(groupBy);
    groupWaitMs = groupWaitMs == null ? 10_000L : groupWaitMs;
    groupIntervalMs = groupIntervalMs == null ? 60_000L : groupIntervalMs;
    repeatIntervalMs = repeatIntervalMs == null ? 4 * 3_600_000L : repeatIntervalMs;
    resendIntervalMs = resendIntervalMs == null ? 60_000L : resendIntervalMs;
    retryInitialMs = retryInitialMs == null ? 500L : retryInitialMs;
    retryMaxMs = retryMaxMs == null ? 60_000L : retryMaxMs;
    timeoutMs = timeoutMs == null ? 10_000L : timeoutMs;
    maxAlertsPerMessage = maxAlertsPerMessage == null ? 100 : maxAlertsPerMessage;
    outboxMaxBytes = outboxMaxBytes == null ? 64L << 20 : outboxMaxBytes;
    maxAgeMs = maxAgeMs == null ? 24 * 3_600_000L : maxAgeMs;
  }

  public static NotifySettings defaults() {
    return builder().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  /** A builder holding these settings, to derive other settings from them. */
  public Builder toBuilder() {
    return new Builder()
        .alertmanagerUrl(alertmanagerUrl)
        .webhookUrl(webhookUrl)
        .slackWebhookUrl(slackWebhookUrl)
        .stateDir(stateDir)
        .outboxMaxEntries(outboxMaxEntries)
        .groupBy(groupBy)
        .groupWaitMs(groupWaitMs)
        .groupIntervalMs(groupIntervalMs)
        .repeatIntervalMs(repeatIntervalMs)
        .resendIntervalMs(resendIntervalMs)
        .retryInitialMs(retryInitialMs)
        .retryMaxMs(retryMaxMs)
        .timeoutMs(timeoutMs)
        .maxAlertsPerMessage(maxAlertsPerMessage)
        .externalUrl(externalUrl)
        .outboxMaxBytes(outboxMaxBytes)
        .maxAgeMs(maxAgeMs)
        .runbookBaseUrl(runbookBaseUrl);
  }

  public boolean anyReceiver() {
    return alertmanagerUrl != null || webhookUrl != null || slackWebhookUrl != null;
  }

  @Override
  public void validate(String path) {
    Validated.httpUrl(alertmanagerUrl, path + "alertmanager_url");
    Validated.httpUrl(webhookUrl, path + "webhook_url");
    Validated.httpUrl(slackWebhookUrl, path + "slack_webhook_url");
    Validated.httpUrl(externalUrl, path + "external_url");
    Validated.httpUrl(runbookBaseUrl, path + "runbook_base_url");
    Validated.require(
        outboxMaxEntries >= 1 && outboxMaxEntries <= 1_000_000,
        path + "outbox_max_entries",
        "must be 1..1000000");
    Validated.require(outboxMaxBytes >= 4096, path + "outbox_max_bytes", "must be at least 4096");
    Validated.require(maxAgeMs >= 1000, path + "max_age_ms", "must be >= 1000");
    Validated.require(groupWaitMs >= 0, path + "group_wait_ms", "must not be negative");
    Validated.require(groupIntervalMs >= 0, path + "group_interval_ms", "must not be negative");
    Validated.require(repeatIntervalMs >= 1000, path + "repeat_interval_ms", "must be >= 1000");
    Validated.require(resendIntervalMs >= 100, path + "resend_interval_ms", "must be >= 100");
    Validated.require(retryInitialMs >= 1, path + "retry_initial_ms", "must be >= 1");
    Validated.require(
        retryMaxMs >= retryInitialMs, path + "retry_max_ms", "must be >= retry_initial_ms");
    Validated.require(timeoutMs >= 100, path + "timeout_ms", "must be >= 100");
    Validated.require(
        maxAlertsPerMessage >= 1 && maxAlertsPerMessage <= 10_000,
        path + "max_alerts_per_message",
        "must be 1..10000");
  }

  /**
   * Builds settings in code; a value left unset takes its default (the canonical constructor's).
   */
  public static final class Builder {
    private String alertmanagerUrl;
    private String webhookUrl;
    private String slackWebhookUrl;
    private String stateDir;
    private Integer outboxMaxEntries;
    private List<String> groupBy;
    private Long groupWaitMs;
    private Long groupIntervalMs;
    private Long repeatIntervalMs;
    private Long resendIntervalMs;
    private Long retryInitialMs;
    private Long retryMaxMs;
    private Long timeoutMs;
    private Integer maxAlertsPerMessage;
    private String externalUrl;
    private Long outboxMaxBytes;
    private Long maxAgeMs;
    private String runbookBaseUrl;

    private Builder() {}

    public Builder alertmanagerUrl(String alertmanagerUrl) {
      this.alertmanagerUrl = alertmanagerUrl;
      return this;
    }

    public Builder webhookUrl(String webhookUrl) {
      this.webhookUrl = webhookUrl;
      return this;
    }

    public Builder slackWebhookUrl(String slackWebhookUrl) {
      this.slackWebhookUrl = slackWebhookUrl;
      return this;
    }

    public Builder stateDir(String stateDir) {
      this.stateDir = stateDir;
      return this;
    }

    public Builder outboxMaxEntries(Integer outboxMaxEntries) {
      this.outboxMaxEntries = outboxMaxEntries;
      return this;
    }

    public Builder groupBy(List<String> groupBy) {
      this.groupBy = groupBy;
      return this;
    }

    public Builder groupWaitMs(Long groupWaitMs) {
      this.groupWaitMs = groupWaitMs;
      return this;
    }

    public Builder groupIntervalMs(Long groupIntervalMs) {
      this.groupIntervalMs = groupIntervalMs;
      return this;
    }

    public Builder repeatIntervalMs(Long repeatIntervalMs) {
      this.repeatIntervalMs = repeatIntervalMs;
      return this;
    }

    public Builder resendIntervalMs(Long resendIntervalMs) {
      this.resendIntervalMs = resendIntervalMs;
      return this;
    }

    public Builder retryInitialMs(Long retryInitialMs) {
      this.retryInitialMs = retryInitialMs;
      return this;
    }

    public Builder retryMaxMs(Long retryMaxMs) {
      this.retryMaxMs = retryMaxMs;
      return this;
    }

    public Builder timeoutMs(Long timeoutMs) {
      this.timeoutMs = timeoutMs;
      return this;
    }

    public Builder maxAlertsPerMessage(Integer maxAlertsPerMessage) {
      this.maxAlertsPerMessage = maxAlertsPerMessage;
      return this;
    }

    public Builder externalUrl(String externalUrl) {
      this.externalUrl = externalUrl;
      return this;
    }

    public Builder outboxMaxBytes(Long outboxMaxBytes) {
      this.outboxMaxBytes = outboxMaxBytes;
      return this;
    }

    public Builder maxAgeMs(Long maxAgeMs) {
      this.maxAgeMs = maxAgeMs;
      return this;
    }

    public Builder runbookBaseUrl(String runbookBaseUrl) {
      this.runbookBaseUrl = runbookBaseUrl;
      return this;
    }

    public NotifySettings build() {
      return new NotifySettings(
          alertmanagerUrl,
          webhookUrl,
          slackWebhookUrl,
          stateDir,
          outboxMaxEntries,
          groupBy,
          groupWaitMs,
          groupIntervalMs,
          repeatIntervalMs,
          resendIntervalMs,
          retryInitialMs,
          retryMaxMs,
          timeoutMs,
          maxAlertsPerMessage,
          externalUrl,
          outboxMaxBytes,
          maxAgeMs,
          runbookBaseUrl);
    }
  }
}
