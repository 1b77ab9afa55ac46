package dev.cudawatch.ingest.state;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cudawatch.common.io.AtomicFiles;
import dev.cudawatch.common.wire.WireJson;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;

/**
 * A state file the agent reads back after a restart or an upgrade (file positions, the kernel log's
 * cursor, a spool's cursor): one JSON object {@code {"format": N, ...}}, replaced crash-safely
 * through {@link AtomicFiles}. The releases before formats (up to 5be5e18) wrote these files
 * without one: whatever is not such an object is that form, format 1, read by {@link
 * Codec#fromUnversioned} and rewritten in the current format by the next save. A format newer than
 * the reader's is never guessed at: it raises {@link NewerFormatException}, and each caller decides
 * what is safe for its file (refuse to start, or read its source again; never skip ahead).
 *
 * @param <T> the state the file holds
 */
public final class StateFile<T> {
  /** The field naming the format, first in every versioned state file. */
  public static final String FORMAT = "format";

  /** How one kind of state file is read and written. */
  public interface Codec<T> {
    /** The format written, 2 or more (1 is the unversioned form of earlier releases). */
    int format();

    /** The state of a versioned file of {@code format} (2 to {@link #format()}). */
    T fromJson(int format, JsonNode file) throws IOException;

    /** The state of a file written before formats, exactly as those releases wrote it. */
    T fromUnversioned(byte[] bytes) throws IOException;

    /** The fields of the state, written after {@code "format"}. */
    void toJson(T state, ObjectNode into) throws IOException;
  }

  /** A file of a format newer than this release reads (written by a later release). */
  public static final class NewerFormatException extends IOException {
    private static final long serialVersionUID = 1L;

    private final int format;

    NewerFormatException(String message, int format) {
      super(message);
      this.format = format;
    }

    public int format() {
      return format;
    }
  }

  private final Path file;
  private final Codec<T> codec;

  public StateFile(Path file, Codec<T> codec) {
    this.file = file;
    this.codec = codec;
  }

  public Path path() {
    return file;
  }

  /**
   * The state in the file, or null when there is none.
   *
   * @throws NewerFormatException a format this release does not read
   * @throws IOException the file cannot be read or is corrupt (the message says which file)
   */
  public T read() throws IOException {
    if (!Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
      return null;
    }
    return decode(Files.readAllBytes(file), codec, file.toString());
  }

  /** Replaces the file with {@code state} in the current format, durably. */
  public void write(T state) throws IOException {
    AtomicFiles.write(file, encode(state, codec));
  }

  /** Decodes the bytes of a state file read elsewhere ({@code where} names it in errors). */
  public static <T> T decode(byte[] bytes, Codec<T> codec, String where) throws IOException {
    int format = formatOf(bytes);
    try {
      if (format == 1) {
        return codec.fromUnversioned(bytes);
      }
      if (format > codec.format()) {
        throw new NewerFormatException(
            where
                + " is format "
                + format
                + ", written by a newer release; this release reads formats 1 to "
                + codec.format(),
            format);
      }
      if (format < 2) {
        throw new IOException("format " + format + " is not a format of this file");
      }
      return codec.fromJson(format, WireJson.mapper().readTree(bytes));
    } catch (NewerFormatException e) {
      throw e;
    } catch (IOException | RuntimeException e) {
      throw new IOException("cannot read " + where + ": " + e.getMessage(), e);
    }
  }

  /** The bytes of a state file holding {@code state}. */
  public static <T> byte[] encode(T state, Codec<T> codec) throws IOException {
    ObjectNode n = WireJson.mapper().createObjectNode();
    n.put(FORMAT, codec.format());
    codec.toJson(state, n);
    return WireJson.mapper().writeValueAsBytes(n);
  }

  /**
   * The format of a state file's bytes: that of a JSON object with an integral {@code format}, else
   * 1 (the unversioned form, or garbage that its reader will refuse).
   */
  static int formatOf(byte[] bytes) {
    try {
      JsonNode n = WireJson.mapper().readTree(bytes);
      JsonNode f = n == null ? null : n.get(FORMAT);
      return n != null && n.isObject() && f != null && f.canConvertToInt() && f.isIntegralNumber()
          ? f.intValue()
          : 1;
    } catch (IOException | RuntimeException e) {
      return 1;
    }
  }
}
