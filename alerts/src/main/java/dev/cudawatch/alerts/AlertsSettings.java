package dev.cudawatch.alerts;

import dev.cudawatch.alerts.handoff.NodeConditionSettings;
import dev.cudawatch.alerts.notify.NotifySettings;
import dev.cudawatch.common.config.ConfigLoader;
import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.common.config.Validated;
import dev.cudawatch.common.http.DefaultPorts;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The alerts service's configuration (YAML plus {@code CUDAWATCH_ALERTS_} environment overrides):
 * {@link #load} reads it, {@link #builder()} makes it in code. The canonical constructor is what
 * the YAML binding calls (a record's must be public): it fills in the defaults, in this one place,
 * for every key left out.
 *
 * @param kafka where the incidents and alerts topics live
 * @param groupId consumer group
 * @param httpHost address to bind; loopback unless an operator opens it up
 * @param httpPort port of /metrics, /api and /healthz
 * @param maxIncidents incidents kept for the API, newest first (a bounded ring)
 * @param maxAlerts alerts kept by fingerprint
 * @param hostLabel whether incidents_total carries a host label
 * @param maxSeriesPerMetric label combinations per metric before new ones go to "other"
 * @param allowedJobLabels job ids allowed as a label (none by default: jobs are unbounded)
 * @param notifications where alerts are sent, and how
 * @param maxIncidentsBytes bytes of incidents (their JSON) kept for the API; the oldest leave first
 * @param maxGpus GPUs whose health (the ledger's latest recommendation) is kept for the page and
 *     the API; past it the one updated longest ago is forgotten and counted
 * @param nodeConditions the hand-off to remediation as a Kubernetes node condition (off by default)
 * @param maxJobFailures failed jobs (from {@code cudawatch.job-failures}) kept for the page and the
 *     API, newest first; past it the one received longest ago is forgotten and counted
 * @param webConfigFile TLS and basic auth of the HTTP server: a web-config file in the format of
 *     Prometheus exporters ({@code tls_server_config}, {@code basic_auth_users} with bcrypt
 *     hashes), the same file the scraping Prometheus can use; every path needs the credentials,
 *     /healthz too. Unset: plain HTTP without auth
 */
public record AlertsSettings(
    KafkaSettings kafka,
    String groupId,
    String httpHost,
    Integer httpPort,
    Integer maxIncidents,
    Integer maxAlerts,
    Boolean hostLabel,
    Integer maxSeriesPerMetric,
    List<String> allowedJobLabels,
    NotifySettings notifications,
    Long maxIncidentsBytes,
    Integer maxGpus,
    NodeConditionSettings nodeConditions,
    Integer maxJobFailures,
    String webConfigFile)
    implements Validated {

  /** For the YAML binding and {@link Builder#build()}: a null is a key left out. */
  public AlertsSettings {
    kafka = kafka == null ? KafkaSettings.defaults() : kafka;
    groupId = groupId == null ? "cudawatch-alerts" : groupId;
    httpHost = httpHost == null ? "127.0.0.1" : httpHost;
    httpPort = httpPort == null ? DefaultPorts.ALERTS_HTTP : httpPort;
    maxIncidents = maxIncidents == null ? 10_000 : maxIncidents;
    maxAlerts = maxAlerts == null ? 10_000 : maxAlerts;
    hostLabel = hostLabel == null ? Boolean.TRUE : hostLabel;
    maxSeriesPerMetric = maxSeriesPerMetric == null ? 2000 : maxSeriesPerMetric;
    allowedJobLabels = allowedJobLabels == null ? List.of() : List.copyOf(allowedJobLabels);
    notifications = notifications == null ? NotifySettings.defaults() : notifications;
    maxIncidentsBytes = maxIncidentsBytes == null ? 64L << 20 : maxIncidentsBytes;
    maxGpus = maxGpus == null ? 10_000 : maxGpus;
    nodeConditions = nodeConditions == null ? NodeConditionSettings.defaults() : nodeConditions;
    maxJobFailures = maxJobFailures == null ? 10_000 : maxJobFailures;
  }

  /** The environment prefix of the alerts service's overrides. */
  public static final String ENV_PREFIX = "CUDAWATCH_ALERTS";

  /**
   * The settings of {@code file} (null: defaults only) with the {@code CUDAWATCH_ALERTS_} variables
   * of {@code env} over them, checked; errors name the file, line and key.
   */
  public static AlertsSettings load(Path file, Map<String, String> env) {
    return new ConfigLoader(ENV_PREFIX, env).load(file, AlertsSettings.class);
  }

  public static AlertsSettings defaults() {
    return builder().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  /** A builder holding these settings, to derive other settings from them. */
  public Builder toBuilder() {
    return new Builder()
        .kafka(kafka)
        .groupId(groupId)
        .httpHost(httpHost)
        .httpPort(httpPort)
        .maxIncidents(maxIncidents)
        .maxAlerts(maxAlerts)
        .hostLabel(hostLabel)
        .maxSeriesPerMetric(maxSeriesPerMetric)
        .allowedJobLabels(allowedJobLabels)
        .notifications(notifications)
        .maxIncidentsBytes(maxIncidentsBytes)
        .maxGpus(maxGpus)
        .nodeConditions(nodeConditions)
        .maxJobFailures(maxJobFailures)
        .webConfigFile(webConfigFile);
  }

  @Override
  public void validate(String path) {
    kafka.validate(path + "kafka.");
    Validated.require(httpPort >= 0 && httpPort <= 65535, path + "http_port", "must be 0..65535");
    Validated.require(
        maxIncidents >= 1 && maxIncidents <= 1_000_000,
        path + "max_incidents",
        "must be 1..1000000");
    Validated.require(
        maxIncidentsBytes >= 65_536, path + "max_incidents_bytes", "must be at least 65536");
    Validated.require(
        maxAlerts >= 1 && maxAlerts <= 1_000_000, path + "max_alerts", "must be 1..1000000");
    Validated.require(
        maxSeriesPerMetric >= 10, path + "max_series_per_metric", "must be at least 10");
    Validated.require(
        maxGpus >= 1 && maxGpus <= 1_000_000, path + "max_gpus", "must be 1..1000000");
    Validated.require(
        maxJobFailures >= 1 && maxJobFailures <= 1_000_000,
        path + "max_job_failures",
        "must be 1..1000000");
    notifications.validate(path + "notifications.");
    nodeConditions.validate(path + "node_conditions.");
    Validated.require(
        webConfigFile == null
            || java.nio.file.Files.isReadable(java.nio.file.Path.of(webConfigFile)),
        path + "web_config_file",
        "no readable file there");
  }

  /** The bounds on the metrics' labels. */
  public dev.cudawatch.alerts.metrics.MetricLimits metricLimits() {
    return new dev.cudawatch.alerts.metrics.MetricLimits(
        hostLabel, allowedJobLabels, maxSeriesPerMetric);
  }

  /**
   * Builds settings in code; a value left unset takes its default (the canonical constructor's).
   * {@link #build()} does not validate, as the YAML binding does not: the loader checks, with the
   * file's line numbers.
   */
  public static final class Builder {
    private KafkaSettings kafka;
    private String groupId;
    private String httpHost;
    private Integer httpPort;
    private Integer maxIncidents;
    private Integer maxAlerts;
    private Boolean hostLabel;
    private Integer maxSeriesPerMetric;
    private List<String> allowedJobLabels;
    private NotifySettings notifications;
    private Long maxIncidentsBytes;
    private Integer maxGpus;
    private NodeConditionSettings nodeConditions;
    private Integer maxJobFailures;
    private String webConfigFile;

    private Builder() {}

    public Builder kafka(KafkaSettings kafka) {
      this.kafka = kafka;
      return this;
    }

    public Builder groupId(String groupId) {
      this.groupId = groupId;
      return this;
    }

    public Builder httpHost(String httpHost) {
      this.httpHost = httpHost;
      return this;
    }

    public Builder httpPort(Integer httpPort) {
      this.httpPort = httpPort;
      return this;
    }

    public Builder maxIncidents(Integer maxIncidents) {
      this.maxIncidents = maxIncidents;
      return this;
    }

    public Builder maxAlerts(Integer maxAlerts) {
      this.maxAlerts = maxAlerts;
      return this;
    }

    public Builder hostLabel(Boolean hostLabel) {
      this.hostLabel = hostLabel;
      return this;
    }

    public Builder maxSeriesPerMetric(Integer maxSeriesPerMetric) {
      this.maxSeriesPerMetric = maxSeriesPerMetric;
      return this;
    }

    public Builder allowedJobLabels(List<String> allowedJobLabels) {
      this.allowedJobLabels = allowedJobLabels;
      return this;
    }

    public Builder notifications(NotifySettings notifications) {
      this.notifications = notifications;
      return this;
    }

    public Builder maxIncidentsBytes(Long maxIncidentsBytes) {
      this.maxIncidentsBytes = maxIncidentsBytes;
      return this;
    }

    public Builder maxGpus(Integer maxGpus) {
      this.maxGpus = maxGpus;
      return this;
    }

    public Builder nodeConditions(NodeConditionSettings nodeConditions) {
      this.nodeConditions = nodeConditions;
      return this;
    }

    public Builder maxJobFailures(Integer maxJobFailures) {
      this.maxJobFailures = maxJobFailures;
      return this;
    }

    public Builder webConfigFile(String webConfigFile) {
      this.webConfigFile = webConfigFile;
      return this;
    }

    public AlertsSettings build() {
      return new AlertsSettings(
          kafka,
          groupId,
          httpHost,
          httpPort,
          maxIncidents,
          maxAlerts,
          hostLabel,
          maxSeriesPerMetric,
          allowedJobLabels,
          notifications,
          maxIncidentsBytes,
          maxGpus,
          nodeConditions,
          maxJobFailures,
          webConfigFile);
    }
  }
}
