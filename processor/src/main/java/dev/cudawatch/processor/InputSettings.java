package dev.cudawatch.processor;

import dev.cudawatch.common.config.Validated;
import dev.cudawatch.processor.formats.RecordFormat;

/**
 * One Kafka topic the job reads and the shape of its records.
 *
 * @param topic the topic
 * @param format {@code cudawatch} (the agent's records), {@code fluent-bit}, {@code vector}, {@code
 *     filebeat}, {@code otlp} (otlp_json or otlp_proto) or {@code rsyslog}
 * @param jobPattern an RE2/J pattern matched against each record's file path, with a named group
 *     {@code job} and optionally {@code rank}, e.g. {@code
 *     /jobs/(?P<job>[^/]+)/rank-(?P<rank>\d+)}; tried before pod labels and Slurm output names
 */
public record InputSettings(String topic, String format, String jobPattern) implements Validated {

  public InputSettings {
    format = format == null ? RecordFormat.CUDAWATCH : format;
  }

  @Override
  public void validate(String path) {
    Validated.require(topic != null && !topic.isBlank(), path + "topic", "must not be empty");
    Validated.require(
        RecordFormat.NAMES.contains(format),
        path + "format",
        "must be one of " + RecordFormat.NAMES);
    if (jobPattern != null) {
      try {
        com.google.re2j.Pattern.compile(jobPattern);
      } catch (com.google.re2j.PatternSyntaxException e) {
        Validated.require(
            false, path + "job_pattern", "is not a valid RE2 pattern: " + e.getMessage());
      }
    }
  }
}
