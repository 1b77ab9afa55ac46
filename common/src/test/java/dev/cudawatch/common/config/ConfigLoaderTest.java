package dev.cudawatch.common.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigLoaderTest {
  @TempDir Path dir;

  /** A small config shaped like the services' ones. */
  record Sample(KafkaSettings kafka, Integer port) implements Validated {
    Sample {
      kafka = kafka == null ? KafkaSettings.defaults() : kafka;
      port = port == null ? 9400 : port;
    }

    @Override
    public void validate(String path) {
      kafka.validate(path + "kafka.");
      Validated.require(port > 0, path + "port", "must be positive");
    }
  }

  @Test
  void defaultsThenFileThenEnvironment() throws Exception {
    ConfigLoader none = new ConfigLoader("APP", Map.of());
    assertEquals(9400, none.load(null, Sample.class).port());
    Path f = dir.resolve("c.yaml");
    Files.writeString(
        f,
        "port: 1\nkafka:\n  bootstrap_servers: a:1\n  properties:\n    sasl.jaas.config: secret\n");
    Sample fromFile = none.load(f, Sample.class);
    assertEquals(1, fromFile.port());
    assertEquals(
        "***", fromFile.kafka().redacted().get("sasl.jaas.config"), "secrets never printed");
    Sample fromEnv =
        new ConfigLoader("APP", Map.of("APP_PORT", "2", "APP_KAFKA__BOOTSTRAP_SERVERS", "b:2"))
            .load(f, Sample.class);
    assertEquals(2, fromEnv.port());
    assertEquals("b:2", fromEnv.kafka().bootstrapServers());
  }

  @Test
  void unknownKeysBadValuesAndInvalidSettingsAreNamed() throws Exception {
    Path f = dir.resolve("c.yaml");
    Files.writeString(f, "prot: 1\n");
    ConfigException e =
        assertThrows(
            ConfigException.class, () -> new ConfigLoader("APP", Map.of()).load(f, Sample.class));
    assertTrue(
        e.getMessage().contains("unknown key 'prot'") && e.getMessage().contains("port"),
        e.getMessage());
    Files.writeString(f, "port: many\n");
    e =
        assertThrows(
            ConfigException.class, () -> new ConfigLoader("APP", Map.of()).load(f, Sample.class));
    assertTrue(e.getMessage().contains("bad value for 'port'"), e.getMessage());
    Files.writeString(f, "kafka:\n  bootstrap_servers: nohost\n");
    e =
        assertThrows(
            ConfigException.class, () -> new ConfigLoader("APP", Map.of()).load(f, Sample.class));
    assertTrue(
        e.getMessage().contains("kafka.bootstrap_servers")
            && e.getMessage().contains("not host:port"),
        e.getMessage());
    e =
        assertThrows(
            ConfigException.class,
            () ->
                new ConfigLoader("APP", Map.of()).load(dir.resolve("missing.yaml"), Sample.class));
    assertTrue(e.getMessage().contains("cannot read"), e.getMessage());
  }
}
