package dev.cudawatch.ingest.files;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cudawatch.common.io.AtomicFiles;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.ingest.state.StateFile;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

/**
 * File positions, checkpointed crash-safely through {@link AtomicFiles}: a crash leaves either the
 * old or the new checkpoint, never half. The file is a versioned {@link StateFile} ({@code
 * {"format": 2, "files": {identity: position}}}); the unversioned map of earlier releases is read
 * and rewritten as format 2 by the next save.
 *
 * <p>A checkpoint this release cannot read (corrupt, or of a newer release after a downgrade) stops
 * the agent's start with a one-line error rather than guessing: skipping ahead would lose lines,
 * and reading every followed file again from its start would ship them all twice under new stream
 * ids (alerts on old incidents again). Moving the file away is the operator's explicit choice of
 * the second.
 */
public final class PositionStore {
  /** The format written: 2 = {@code {"format": 2, "files": {identity: position}}}. */
  public static final int FORMAT = 2;

  private static final TypeReference<Map<String, FilePosition>> MAP = new TypeReference<>() {};

  private final StateFile<Map<String, FilePosition>> file;
  private Map<String, FilePosition> lastSaved;

  public PositionStore(Path dir) throws IOException {
    AtomicFiles.createPrivateDirectories(dir);
    this.file = new StateFile<>(dir.resolve("positions.json"), new Codec());
  }

  public Map<String, FilePosition> load() throws IOException {
    try {
      Map<String, FilePosition> m = file.read();
      return m == null ? new TreeMap<>() : new TreeMap<>(m);
    } catch (StateFile.NewerFormatException e) {
      throw new IOException(
          "cannot read the position checkpoint: "
              + e.getMessage()
              + " (run that release, or move the file away to read every followed file again)",
          e);
    } catch (IOException e) {
      throw new IOException("cannot read the position checkpoint: " + e.getMessage(), e);
    }
  }

  /**
   * Replaces the checkpoint; safe to call from several threads (each write is whole). Unchanged
   * positions are not written again: thousands of idle files cost no serialisation and no fsync
   * every interval. The first save after a start always writes, so a checkpoint of an earlier
   * format is migrated then.
   */
  public synchronized void save(Map<String, FilePosition> positions) throws IOException {
    Map<String, FilePosition> now = new TreeMap<>(positions);
    if (now.equals(lastSaved)) {
      return;
    }
    file.write(now);
    lastSaved = now;
  }

  private static final class Codec implements StateFile.Codec<Map<String, FilePosition>> {
    @Override
    public int format() {
      return FORMAT;
    }

    @Override
    public Map<String, FilePosition> fromJson(int format, JsonNode json) throws IOException {
      JsonNode files = json.get("files");
      if (files == null || !files.isObject()) {
        throw new IOException("no \"files\" object");
      }
      return WireJson.mapper().readerFor(MAP).readValue(files);
    }

    @Override
    public Map<String, FilePosition> fromUnversioned(byte[] bytes) throws IOException {
      return WireJson.mapper().readValue(bytes, MAP); // release 5be5e18: the bare map
    }

    @Override
    public void toJson(Map<String, FilePosition> state, ObjectNode into) {
      into.set("files", WireJson.mapper().valueToTree(state));
    }
  }
}
