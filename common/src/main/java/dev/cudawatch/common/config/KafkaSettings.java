package dev.cudawatch.common.config;

import java.util.Map;
import java.util.TreeMap;

/**
 * How to reach Kafka. {@code properties} pass through to every client unchanged (SASL, TLS,
 * compression, batching), so any client setting works without a new key here.
 *
 * @param bootstrapServers host:port list
 * @param properties extra client properties
 */
public record KafkaSettings(String bootstrapServers, Map<String, String> properties)
    implements Validated {
  public KafkaSettings {
    bootstrapServers = bootstrapServers == null ? "127.0.0.1:9092" : bootstrapServers;
    properties = properties == null ? Map.of() : Map.copyOf(properties);
  }

  public static KafkaSettings defaults() {
    return new KafkaSettings(null, null);
  }

  public KafkaSettings withBootstrapServers(String servers) {
    return new KafkaSettings(servers, properties);
  }

  @Override
  public void validate(String path) {
    Validated.require(!bootstrapServers.isBlank(), path + "bootstrap_servers", "must not be empty");
    for (String hp : bootstrapServers.split(",")) {
      Validated.require(
          hp.strip().matches("[^\\s:]+:\\d{1,5}"),
          path + "bootstrap_servers",
          "'" + hp + "' is not host:port");
    }
  }

  /** Properties safe to log: values of keys that may hold secrets are masked. */
  public Map<String, String> redacted() {
    Map<String, String> out = new TreeMap<>();
    properties.forEach(
        (k, v) -> out.put(k, k.matches("(?i).*(password|secret|jaas|token|key).*") ? "***" : v));
    return out;
  }
}
