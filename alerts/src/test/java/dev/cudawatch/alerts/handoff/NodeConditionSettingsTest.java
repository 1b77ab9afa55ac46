package dev.cudawatch.alerts.handoff;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.alerts.AlertsSettings;
import dev.cudawatch.common.config.ConfigException;
import dev.cudawatch.common.config.ConfigLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The hand-off's YAML: off by default, strict about keys, values checked. */
class NodeConditionSettingsTest {
  @TempDir Path dir;

  private AlertsSettings load(String yaml, Map<String, String> env) throws Exception {
    Path f = dir.resolve("alerts.yaml");
    Files.writeString(f, yaml);
    return new ConfigLoader("CUDAWATCH_ALERTS", env).load(f, AlertsSettings.class);
  }

  @Test
  void offByDefaultAndOnWhenAsked() throws Exception {
    assertFalse(load("max_gpus: 50\n", Map.of()).nodeConditions().enabled());
    AlertsSettings s =
        load(
            "node_conditions:\n  enabled: true\n  api_server_url: https://10.0.0.1:6443\n",
            Map.of("CUDAWATCH_ALERTS_NODE_CONDITIONS__MAX_ATTEMPTS", "5"));
    assertTrue(s.nodeConditions().enabled());
    assertEquals("https://10.0.0.1:6443", s.nodeConditions().apiServerUrl());
    assertEquals(5, s.nodeConditions().maxAttempts());
    assertEquals("CudawatchGpuProblem", s.nodeConditions().conditionType());
  }

  @Test
  void anUnknownKeyOrABadValueIsAnErrorNamingIt() {
    ConfigException unknown =
        assertThrows(
            ConfigException.class, () -> load("node_conditions:\n  cordon: true\n", Map.of()));
    assertTrue(unknown.getMessage().contains("cordon"), unknown.getMessage());
    ConfigException type =
        assertThrows(
            ConfigException.class,
            () -> load("node_conditions:\n  condition_type: gpu bad\n", Map.of()));
    assertTrue(type.getMessage().contains("node_conditions.condition_type"), type.getMessage());
    ConfigException url =
        assertThrows(
            ConfigException.class,
            () -> load("node_conditions:\n  api_server_url: ftp://x\n", Map.of()));
    assertTrue(url.getMessage().contains("node_conditions.api_server_url"), url.getMessage());
    ConfigException gpus =
        assertThrows(ConfigException.class, () -> load("max_gpus: 0\n", Map.of()));
    assertTrue(gpus.getMessage().contains("max_gpus"), gpus.getMessage());
  }
}
