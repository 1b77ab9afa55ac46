package dev.cudawatch.common.cli;

import dev.cudawatch.common.config.KafkaSettings;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * The options of a service that reads one YAML file and talks to Kafka (a picocli mixin: {@code
 * cudawatch agent}, {@code alerts}, {@code processor}): {@code --config FILE}, described with the
 * command's name, and {@code --bootstrap-servers}, which overrides the file's.
 */
public final class ServiceOptions {
  @Option(
      names = "--config",
      paramLabel = "FILE",
      description = "${COMMAND-NAME} YAML configuration")
  Path config;

  @Option(
      names = "--bootstrap-servers",
      paramLabel = "HOST:PORT",
      description = "overrides kafka.bootstrap_servers")
  String bootstrapServers;

  /** The configuration file, or null for defaults and the environment only. */
  public Path config() {
    return config;
  }

  /** The brokers given on the command line, or null. */
  public String bootstrapServers() {
    return bootstrapServers;
  }

  /** {@code configured} with the command line's brokers, when it names some. */
  public KafkaSettings kafka(KafkaSettings configured) {
    return bootstrapServers == null
        ? configured
        : configured.withBootstrapServers(bootstrapServers);
  }
}
