package dev.cudawatch.common.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigLoaderTest {
  @TempDir Path dir;

  /** A small config shaped like the services' ones. */
  record Sample(KafkaSettings kafka, Integer port) implements Validated {
    Sample {
      kafka = kafka == null ? KafkaSettings.defaults() : kafka;
      port = port == null ? 7460 : port;
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
    assertEquals(7460, none.load(null, Sample.class).port());
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
        e.getMessage().startsWith(f + ":1: prot: unknown key (known keys here:")
            && e.getMessage().contains("port"),
        e.getMessage());
    Files.writeString(f, "port: many\n");
    e =
        assertThrows(
            ConfigException.class, () -> new ConfigLoader("APP", Map.of()).load(f, Sample.class));
    assertTrue(e.getMessage().startsWith(f + ":1: port: bad value: "), e.getMessage());
    Files.writeString(f, "kafka:\n  bootstrap_servers: nohost\n");
    e =
        assertThrows(
            ConfigException.class, () -> new ConfigLoader("APP", Map.of()).load(f, Sample.class));
    assertEquals(f + ":2: kafka.bootstrap_servers: 'nohost' is not host:port", e.getMessage());
    e =
        assertThrows(
            ConfigException.class,
            () ->
                new ConfigLoader("APP", Map.of()).load(dir.resolve("missing.yaml"), Sample.class));
    assertTrue(e.getMessage().contains("cannot read"), e.getMessage());
  }

  @Test
  void checkListsEveryUnknownKeyWithItsLineAndEnvironmentErrorsNameTheVariable() throws Exception {
    Path f = dir.resolve("many.yaml");
    Files.writeString(f, "prot: 1\nkafka:\n  bootstrap_servers: a:1\n  propertes: {}\n");
    assertEquals(
        List.of(f + ":1: prot: unknown key", f + ":4: kafka.propertes: unknown key"),
        ConfigLoader.problems(f, Sample.class));
    Files.writeString(f, "port: 1\n");
    assertEquals(List.of(), ConfigLoader.problems(f, Sample.class));
    Files.writeString(f, "port: 1\nport: 2\n");
    assertEquals(
        List.of(f + ":2: not valid YAML: Duplicate field 'port'"),
        ConfigLoader.problems(f, Sample.class));
    ConfigException e =
        assertThrows(
            ConfigException.class,
            () ->
                new ConfigLoader("APP", Map.of("APP_KAFKA__BOOTSTRAP_SERVERS", "nohost"))
                    .load(null, Sample.class));
    assertEquals(
        "environment variable APP_KAFKA__BOOTSTRAP_SERVERS: kafka.bootstrap_servers: 'nohost' is"
            + " not host:port",
        e.getMessage());
  }

  @Test
  void yamlLinesFindsNestedKeysAndListItems() {
    byte[] yaml =
        "a: 1\nb:\n  c: 2\n  d:\n    - x: 1\n    - x: 2\n      y: 3\n"
            .getBytes(java.nio.charset.StandardCharsets.UTF_8);
    assertEquals(1, YamlLines.lineOf(yaml, "a"));
    assertEquals(3, YamlLines.lineOf(yaml, "b.c"));
    assertEquals(7, YamlLines.lineOf(yaml, "b.d[1].y"));
    assertEquals(2, YamlLines.lineOf(yaml, "b.missing"), "the deepest ancestor present");
    assertEquals(0, YamlLines.lineOf(yaml, "nothing"));
  }
}
