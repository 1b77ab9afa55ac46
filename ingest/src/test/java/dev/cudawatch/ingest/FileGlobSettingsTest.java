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

/** The agent's {@code files:} entries: plain strings, or a path with a format. */
class FileGlobSettingsTest {
  @TempDir Path dir;

  private AgentSettings load(String yaml) {
    try {
      Path f = Files.writeString(dir.resolve("agent.yaml"), yaml);
      return new ConfigLoader("CUDAWATCH_AGENT", Map.of()).load(f, AgentSettings.class);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  @Test
  void stringsAndPathsWithAFormat() {
    AgentSettings s =
        load(
            "files:\n"
                + "  - /var/log/training/**/*.log\n"
                + "  - {path: \"/var/log/pods/*/*/*.log\", format: cri}\n"
                + "  - {path: /data/run.log, format: plain}\n"
                + "  - {path: /data/other.log}\n");
    assertEquals(
        List.of(
            new FileGlob("/var/log/training/**/*.log", FileGlob.Format.PLAIN),
            new FileGlob("/var/log/pods/*/*/*.log", FileGlob.Format.CRI),
            new FileGlob("/data/run.log", FileGlob.Format.PLAIN),
            new FileGlob("/data/other.log", FileGlob.Format.PLAIN)),
        s.files());
    assertEquals(
        List.of("/var/log/pods/*/*/*.log"), FileGlob.paths(s.files(), FileGlob.Format.CRI));
    assertEquals(4, FileGlob.paths(s.files(), null).size());
  }

  @Test
  void unknownKeysFormatsAndEmptyPathsAreErrors() {
    ConfigException key =
        assertThrows(ConfigException.class, () -> load("files: [{path: /x, formt: cri}]\n"));
    assertTrue(key.getMessage().contains("formt"), key.getMessage());
    ConfigException format =
        assertThrows(ConfigException.class, () -> load("files: [{path: /x, format: docker}]\n"));
    assertTrue(format.getMessage().contains("files[0].format"), format.getMessage());
    ConfigException empty =
        assertThrows(ConfigException.class, () -> load("files: [{format: cri}]\n"));
    assertTrue(empty.getMessage().contains("path must not be empty"), empty.getMessage());
  }
}
