package dev.cudawatch.processor.formats;

import dev.cudawatch.common.config.Validated;

/**
 * One Kafka topic the job reads and the shape of its records.
 *
 * @param topic the topic
 * @param format {@code cudawatch} (the agent's records), {@code fluent-bit}, {@code vector}, {@code
 *     filebeat}, {@code otlp} (otlp_json or otlp_proto) or {@code rsyslog}
 * @param jobPattern an RE2/J pattern matched against each record's file path, with a named group
 *     {@code job} and optionally {@code rank}, e.g. {@code
 *     /jobs/(?P<job>[^/]+)/rank-(?P<rank>\d+)}; tried before pod labels and Slurm output names
 * @param kernelFiles an RE2/J pattern for the paths this topic's shipper reads the kernel log from
 *     (default: {@code /dev/kmsg}, {@code /proc/kmsg}, {@code /var/log/kern.log} and {@code
 *     /var/log/dmesg}, with their numbered rotations); lines from any other file are a job's, even
 *     a file named {@code kern.log} in a job's directory
 */
public record InputSettings(String topic, String format, String jobPattern, String kernelFiles)
    implements Validated {

  /** An input that reads the kernel log from the system's own places. */
  public InputSettings(String topic, String format, String jobPattern) {
    this(topic, format, jobPattern, null);
  }

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
    requireRe2(jobPattern, path + "job_pattern");
    requireRe2(kernelFiles, path + "kernel_files");
  }

  private static void requireRe2(String pattern, String key) {
    if (pattern != null) {
      try {
        com.google.re2j.Pattern.compile(pattern);
      } catch (com.google.re2j.PatternSyntaxException e) {
        Validated.require(false, key, "is not a valid RE2 pattern: " + e.getMessage());
      }
    }
  }
}
