package dev.cudawatch.simulator;

import dev.cudawatch.common.gpu.GpuMemoryQuery;
import dev.cudawatch.common.wire.RecordKind;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Writes the fleet as files under a directory, as the nodes would: {@code HOST/JOB/rank-N.log},
 * {@code HOST/kern.log} and {@code HOST/nvidia-smi.csv} (with nvidia-smi's CSV header), for agents
 * to follow. Files are flushed in real-time mode so agents see lines as they are written.
 */
final class FilesOutput implements Consumer<SimLine>, AutoCloseable {
  private static final int MAX_OPEN = 512;
  private final Path dir;
  private final boolean flushEach;
  private final Map<String, BufferedWriter> open =
      new LinkedHashMap<>(64, 0.75f, true) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<String, BufferedWriter> e) {
          if (size() > MAX_OPEN) {
            close(e.getValue());
            return true;
          }
          return false;
        }
      };

  FilesOutput(Path dir, boolean flushEach) {
    this.dir = dir;
    this.flushEach = flushEach;
  }

  @Override
  public void accept(SimLine l) {
    if (l.kind() == RecordKind.EXIT) {
      return; // a plain file has no exit status; `cudawatch run` would report it
    }
    try {
      BufferedWriter w = open.get(l.file());
      if (w == null) {
        Path f = dir.resolve(l.file());
        Files.createDirectories(f.getParent());
        boolean fresh = !Files.exists(f);
        w =
            Files.newBufferedWriter(
                f,
                StandardCharsets.UTF_8,
                java.nio.file.StandardOpenOption.CREATE,
                java.nio.file.StandardOpenOption.APPEND);
        if (fresh && l.kind() == RecordKind.GPU_MEMORY) {
          w.write(GpuMemoryQuery.QUERY.replace(",", ", ") + "\n");
        }
        open.put(l.file(), w);
      }
      w.write(l.text());
      w.write('\n');
      if (flushEach) {
        w.flush();
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + l.file() + ": " + e.getMessage(), e);
    }
  }

  private static void close(BufferedWriter w) {
    try {
      w.close();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void close() {
    open.values().forEach(FilesOutput::close);
    open.clear();
  }
}
