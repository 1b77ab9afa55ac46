package dev.cudawatch.alerts.metrics;

import java.util.List;

/**
 * What bounds the service's label sets: the settings' {@code host_label}, {@code
 * allowed_job_labels} and {@code max_series_per_metric}, handed down so that the metrics package
 * does not reach back into the settings' package.
 */
public record MetricLimits(
    boolean hostLabel, List<String> allowedJobLabels, int maxSeriesPerMetric) {
  public MetricLimits {
    allowedJobLabels = List.copyOf(allowedJobLabels);
  }
}
