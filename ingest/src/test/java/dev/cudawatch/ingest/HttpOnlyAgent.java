package dev.cudawatch.ingest;

import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.kafka.embedded.EmbeddedKafkaBroker;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * An agent for tests of its HTTP endpoint: no files, kernel log, GPU samples or nvidia-smi, an
 * ephemeral port, and a broker address nothing listens on (the HTTP side needs none).
 */
final class HttpOnlyAgent {
  private HttpOnlyAgent() {}

  static AgentSettings.Builder settings(Path dir) throws IOException {
    String nobody = "127.0.0.1:" + EmbeddedKafkaBroker.freePort();
    return AgentSettings.builder()
        .kafka(new KafkaSettings(nobody, Map.of()))
        .globs(List.of())
        .stateDir(dir.resolve("state").toString())
        .kernelLog(null)
        .gpuSampleIntervalMs(0)
        .httpPort(0)
        .runSpoolRoot(dir.resolve("spools").toString())
        .nvidiaSmi(dir.resolve("no-nvidia-smi").toString());
  }
}
