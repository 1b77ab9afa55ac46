package dev.cudawatch.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.config.ConfigException;
import dev.cudawatch.common.config.ConfigLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent's {@code slurm:} and {@code kubernetes:} keys, as agent.yaml and the environment set
 * them.
 */
class AttributionSettingsTest {
  @TempDir Path dir;

  private AgentSettings load(String yaml, Map<String, String> env) throws Exception {
    Path f = Files.writeString(dir.resolve("agent.yaml"), yaml);
    AgentSettings s = new ConfigLoader("CUDAWATCH_AGENT", env).load(f, AgentSettings.class);
    s.validate("");
    return s;
  }

  @Test
  void defaultsAndConfiguredKeys() throws Exception {
    AgentSettings d = load("host: n1\n", Map.of());
    assertTrue(d.slurm().enabled());
    assertEquals("/run/cudawatch/slurm", d.slurm().sidecarDir());
    assertEquals(SlurmSourceSettings.DEFAULT_PATTERNS, d.slurm().pathPatterns());
    assertEquals(
        "/var/lib/kubelet/pod-resources/kubelet.sock", d.kubernetes().podResourcesSocket());
    assertEquals(2000L, d.kubernetes().timeoutMs());

    AgentSettings s =
        load(
            "host: n1\n"
                + "slurm:\n"
                + "  sidecar_dir: /var/run/cw\n"
                + "  path_patterns: ['%x-%j.log']\n"
                + "  scontrol: ''\n"
                + "  node_name: gpu-7\n"
                + "kubernetes:\n"
                + "  enabled: false\n"
                + "  pod_resources_socket: /host/kubelet.sock\n"
                + "  timeout_ms: 500\n",
            Map.of("CUDAWATCH_AGENT_SLURM__CACHE_TTL_MS", "5000"));
    assertEquals("/var/run/cw", s.slurm().sidecarDir());
    assertEquals(List.of("%x-%j.log"), s.slurm().pathPatterns());
    assertEquals("", s.slurm().scontrol());
    assertEquals("gpu-7", s.slurm().nodeName());
    assertEquals(5000L, s.slurm().cacheTtlMs());
    assertEquals(false, s.kubernetes().enabled());
    assertEquals(500L, s.kubernetes().timeoutMs());
  }

  @Test
  void unknownKeysAndBadValuesAreOneLineErrors() {
    ConfigException unknown =
        assertThrows(
            ConfigException.class, () -> load("slurm:\n  sidecar_directory: /x\n", Map.of()));
    assertTrue(unknown.getMessage().contains("slurm.sidecar_directory"), unknown.getMessage());
    ConfigException pattern =
        assertThrows(
            ConfigException.class, () -> load("slurm:\n  path_patterns: [slurm.out]\n", Map.of()));
    assertTrue(pattern.getMessage().contains("slurm.path_patterns"), pattern.getMessage());
    assertTrue(pattern.getMessage().contains("needs %j"), pattern.getMessage());
    ConfigException timeout =
        assertThrows(ConfigException.class, () -> load("kubernetes:\n  timeout_ms: 0\n", Map.of()));
    assertTrue(timeout.getMessage().contains("kubernetes.timeout_ms"), timeout.getMessage());
  }

  @Test
  void thePackagedSlurmConfigFollowsOnlyThisNodesJobs() throws Exception {
    AgentSettings s =
        new ConfigLoader("CUDAWATCH_AGENT", Map.of())
            .load(Path.of("../deploy/slurm/agent.yaml"), AgentSettings.class);
    s.validate("");
    assertTrue(s.slurm().followSidecarPaths(), "the sidecars' paths, written for this node's jobs");
    for (FileGlob g : s.files()) {
      assertTrue(!g.path().startsWith("/home"), "a glob over a shared /home: " + g);
    }
    assertEquals(5000L, s.slurm().scontrolTimeoutMs());
    ConfigException off =
        assertThrows(
            ConfigException.class,
            () -> load("slurm:\n  enabled: false\n  follow_sidecar_paths: true\n", Map.of()));
    assertTrue(off.getMessage().contains("slurm.follow_sidecar_paths"), off.getMessage());
    ConfigException typo =
        assertThrows(
            ConfigException.class, () -> load("slurm:\n  follow_sidecar_path: true\n", Map.of()));
    assertTrue(typo.getMessage().contains("follow_sidecar_path"), typo.getMessage());
  }
}
