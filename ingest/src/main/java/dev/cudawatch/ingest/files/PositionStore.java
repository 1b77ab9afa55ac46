package dev.cudawatch.ingest.files;

import com.fasterxml.jackson.core.type.TypeReference;
import dev.cudawatch.common.io.AtomicFiles;
import dev.cudawatch.common.wire.WireJson;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

/**
 * File positions, checkpointed crash-safely through {@link AtomicFiles}: a crash leaves either the
 * old or the new checkpoint, never half.
 */
public final class PositionStore {
  private final Path file;

  public PositionStore(Path dir) throws IOException {
    AtomicFiles.createPrivateDirectories(dir);
    this.file = dir.resolve("positions.json");
  }

  public Map<String, FilePosition> load() throws IOException {
    if (!Files.exists(file)) {
      return new TreeMap<>();
    }
    try {
      return new TreeMap<>(
          WireJson.mapper()
              .readValue(file.toFile(), new TypeReference<Map<String, FilePosition>>() {}));
    } catch (IOException e) {
      throw new IOException(
          "cannot read the position checkpoint " + file + ": " + e.getMessage(), e);
    }
  }

  /** Replaces the checkpoint; safe to call from several threads (each write is whole). */
  public void save(Map<String, FilePosition> positions) throws IOException {
    AtomicFiles.write(file, WireJson.mapper().writeValueAsBytes(new TreeMap<>(positions)));
  }
}
