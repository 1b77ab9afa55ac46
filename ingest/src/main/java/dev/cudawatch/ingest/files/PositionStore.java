package dev.cudawatch.ingest.files;

import com.fasterxml.jackson.core.type.TypeReference;
import dev.cudawatch.common.wire.WireJson;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.TreeMap;

/**
 * File positions, checkpointed crash-safely: write a temporary file, fsync it, rename it over the
 * old one, fsync the directory. A crash leaves either the old or the new checkpoint, never half.
 */
public final class PositionStore {
  private final Path file;

  public PositionStore(Path dir) throws IOException {
    Files.createDirectories(dir);
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

  public void save(Map<String, FilePosition> positions) throws IOException {
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    byte[] bytes = WireJson.mapper().writeValueAsBytes(new TreeMap<>(positions));
    try (FileChannel ch =
        FileChannel.open(
            tmp,
            StandardOpenOption.CREATE,
            StandardOpenOption.WRITE,
            StandardOpenOption.TRUNCATE_EXISTING)) {
      ByteBuffer b = ByteBuffer.wrap(bytes);
      while (b.hasRemaining()) {
        ch.write(b);
      }
      ch.force(true);
    }
    try {
      Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (AtomicMoveNotSupportedException e) {
      Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
    }
    try (FileChannel dir = FileChannel.open(file.getParent(), StandardOpenOption.READ)) {
      dir.force(true);
    } catch (IOException ignored) {
      // some filesystems cannot fsync a directory; the rename is still atomic
    }
  }
}
