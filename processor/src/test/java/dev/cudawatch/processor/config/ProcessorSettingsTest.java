package dev.cudawatch.processor.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.cudawatch.common.config.ConfigException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The builder and the YAML binding share one set of defaults; the new tunables load and check. */
class ProcessorSettingsTest {
  @TempDir Path dir;

  @Test
  void theBuilderAndAnEmptyFileGiveTheSameDefaults() throws Exception {
    Path empty = Files.writeString(dir.resolve("processor.yaml"), "{}\n");
    ProcessorSettings loaded = ProcessorSettings.load(empty, Map.of());
    assertEquals(loaded, ProcessorSettings.builder().build());
    assertEquals(loaded, ProcessorSettings.load(null, Map.of()));
    assertEquals(15L, loaded.jobFailureGapMinutes());
    assertEquals(20_000, loaded.warmupLines());
  }

  @Test
  void toBuilderChangesOnlyWhatItIsTold() {
    ProcessorSettings a =
        ProcessorSettings.builder().parallelism(4).rules(List.of("site.yaml")).build();
    ProcessorSettings b = a.toBuilder().maxClockSkewSeconds(60L).build();
    assertEquals(60L, b.maxClockSkewSeconds());
    assertEquals(a, b.toBuilder().maxClockSkewSeconds(a.maxClockSkewSeconds()).build());
  }

  @Test
  void aTunableComesFromTheFileOrTheEnvironmentAndIsChecked() throws Exception {
    Path f = Files.writeString(dir.resolve("p.yaml"), "signal_throttle_ms: 250\n");
    ProcessorSettings s =
        ProcessorSettings.load(f, Map.of("CUDAWATCH_PROCESSOR_JOB_FAILURE_GAP_MINUTES", "30"));
    assertEquals(250L, s.signalThrottleMs());
    assertEquals(30L, s.jobFailureGapMinutes());
    Path bad = Files.writeString(dir.resolve("bad.yaml"), "group_id: g\nwarmup_lines: -1\n");
    ConfigException e =
        assertThrows(ConfigException.class, () -> ProcessorSettings.load(bad, Map.of()));
    assertEquals(bad + ":2: warmup_lines: must be 0..1000000", e.getMessage());
  }
}
